import type { Clock } from '../core/index.js';
import { RuntimeError, toErrorInfo, type ErrorInfo } from '../core/index.js';
import type { EventInput } from '../core/index.js';
import type { Random } from '../core/index.js';
import type { Tool } from '../tools/index.js';
import { executeTool } from '../tools/index.js';
import { resolveTool } from '../tools/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { inputTable } from './input-table.js';
import type { PlanOptions } from './plan-schema.js';
import type { StepToolRunner } from './step-jobs.js';
import type { StepResult } from './step-result.js';

/** What running one step needs from the plan run. */
export interface StepRunContext {
  readonly runId: string;
  readonly sessionKey: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly tools: ToolRegistry;
  readonly options: PlanOptions;
  /** Aborts on a user abort and, with `failFast`, on the first failure. */
  readonly signal: AbortSignal;
  emit(event: EventInput): void;
  /** Record the compensation of a step whose tool has `undo`. */
  compensate(entry: { toolCallId: string; tool: string; args: unknown; output: unknown }): void;
  /** Runs a prepared step's tool elsewhere (a cluster job); without it the step runs here. @default here */
  readonly runTool?: StepToolRunner;
  /** Resolves once the run's events so far are recorded (a step's start is durable before it runs). @default at once */
  durable?(): Promise<void>;
}

/** A unit of work: a plan step, or one child of an expanded step, with its args resolved. */
export interface StepUnit {
  readonly id: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** The result of a step that failed before or while running, with its events. */
export function failStep(
  context: StepRunContext,
  unit: Pick<StepUnit, 'id' | 'tool'>,
  error: ErrorInfo,
  metadata: StepResult['metadata'],
): StepResult {
  const { runId } = context;
  context.emit({ type: 'tool.failed', runId, toolCallId: unit.id, tool: unit.tool, error, stepId: unit.id });
  context.emit({
    type: 'step.executed',
    runId,
    stepId: unit.id,
    tool: unit.tool,
    success: false,
    executionTime: metadata.executionTime,
    retries: metadata.retries,
    error,
  });
  return { stepId: unit.id, success: false, error, metadata };
}

/** The tool a unit calls, validated args included (the one policy and argument check); an error when it cannot. */
function prepare(context: StepRunContext, unit: StepUnit): { tool: Tool; args: unknown } | ErrorInfo {
  const resolved = resolveTool(context.tools, unit.tool, unit.args);
  if (!resolved.ok) return resolved.error;
  if (resolved.tool.execute === undefined) {
    return {
      code: 'tool_failed',
      message: `"${unit.tool}" is a deferred tool; plans can only run tools with execute`,
    };
  }
  return { tool: resolved.tool, args: resolved.args };
}

/**
 * Run one unit: validate its args against the tool's schema, show them (an `assistant.delta` markdown table),
 * and run the tool through the one tool executor (here, or through `runTool`) with the plan's step timeout and
 * retries as defaults. Never throws: an abort comes back as a `cancelled` result.
 */
export async function runStep(context: StepRunContext, unit: StepUnit): Promise<StepResult> {
  const { runId, clock, options } = context;
  const startedAt = clock.now();
  const metadata = (retries: number) => ({ executionTime: clock.now() - startedAt, retries, startedAt });
  const prepared = prepare(context, unit);
  if ('code' in prepared) return failStep(context, unit, prepared, metadata(0));
  const { tool, args } = prepared;
  context.emit({ type: 'assistant.delta', runId, delta: inputTable(unit.id, unit.tool, unit.args) });
  context.emit({ type: 'tool.called', runId, toolCallId: unit.id, tool: unit.tool, args, stepId: unit.id });
  // At most once: the start is recorded before the tool can take effect, so a crash from here on leaves the step
  // in doubt (never run again on its own) instead of looking as if it never started. An idempotent tool needs no wait.
  if (tool.idempotent !== true) await context.durable?.();
  const call = { toolCallId: unit.id, sessionKey: context.sessionKey, runId };
  const limits = {
    timeoutMs: options.timeoutMs,
    retry: { attempts: options.retries, baseMs: options.retryBaseMs },
  };
  // A runner elsewhere gets the step's own args (plain JSON): it checks them against its tool, as done here.
  const outcome =
    context.runTool === undefined
      ? await executeTool(tool, args, {
          signal: context.signal,
          clock,
          random: context.random,
          call,
          ...limits,
        })
      : await context.runTool({ ...call, tool: unit.tool, args: unit.args, ...limits }, context.signal);
  const retries = Math.max(0, outcome.attempts - 1);
  if (!outcome.ok) return failStep(context, unit, outcome.error, metadata(retries));
  return succeed(context, unit, tool, args, outcome.output, metadata(retries));
}

function succeed(
  context: StepRunContext,
  unit: StepUnit,
  tool: Tool,
  args: unknown,
  output: unknown,
  metadata: StepResult['metadata'],
): StepResult {
  const { runId } = context;
  context.emit({
    type: 'tool.succeeded',
    runId,
    toolCallId: unit.id,
    tool: unit.tool,
    output,
    durationMs: metadata.executionTime,
    stepId: unit.id,
  });
  context.emit({
    type: 'step.executed',
    runId,
    stepId: unit.id,
    tool: unit.tool,
    success: true,
    executionTime: metadata.executionTime,
    retries: metadata.retries,
  });
  if (tool.undo !== undefined) context.compensate({ toolCallId: unit.id, tool: unit.tool, args, output });
  return { stepId: unit.id, success: true, data: output, metadata };
}

/** A `cancelled` error for a step that never ran. */
export function cancelledError(message: string): ErrorInfo {
  return toErrorInfo(new RuntimeError('cancelled', message));
}
