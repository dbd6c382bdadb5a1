import type { Clock } from '../core/index.js';
import type { ErrorInfo } from '../core/index.js';
import type { Random } from '../core/index.js';
import type { StepJob } from '../plans/index.js';
import type { Tool } from '../tools/index.js';
import { describeInvalidArgs } from '../tools/index.js';
import { executeTool, type ToolOutcome } from '../tools/index.js';

/** What a worker runs step jobs with: its own configured tools and its randomness (retry jitter). */
export interface StepJobHost {
  /** A configured tool by name, whatever the policy says: the owner already applied the session's policy. */
  readonly toolByName: (name: string) => Tool | undefined;
  readonly random: Random;
}

/** A failure of a job that never reached its tool, as `executeTool` reports one. */
export function failedOutcome(error: ErrorInfo, durationMs = 0): ToolOutcome {
  return { ok: false, error, attempts: 0, durationMs };
}

/**
 * Run a step job here through the one tool executor: this worker's tool of that name, the args checked against its
 * schema (the owner checked them against its own; a worker on another version may disagree), the job's timeout
 * and retries as defaults. Never throws: an unknown tool is a `tool_failed` outcome.
 */
export function executeStepJob(
  host: StepJobHost,
  clock: Clock,
  job: StepJob,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const tool = host.toolByName(job.tool);
  if (tool === undefined) {
    const message = `no tool "${job.tool}" is configured on the worker that took step "${job.toolCallId}"`;
    return Promise.resolve(failedOutcome({ code: 'tool_failed', message }));
  }
  const parsed = tool.input.safeParse(job.args);
  if (!parsed.success) {
    const message = describeInvalidArgs(job.tool, parsed.error);
    return Promise.resolve(failedOutcome({ code: 'args_invalid', message }));
  }
  return executeTool(tool, parsed.data, {
    signal,
    clock,
    random: host.random,
    call: { toolCallId: job.toolCallId, sessionKey: job.sessionKey, runId: job.runId },
    ...(job.timeoutMs === undefined ? {} : { timeoutMs: job.timeoutMs }),
    ...(job.retry === undefined ? {} : { retry: job.retry }),
  });
}
