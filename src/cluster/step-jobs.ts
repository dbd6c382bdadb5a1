import { abortReason, type Clock } from '../core/index.js';
import { toErrorInfo } from '../core/index.js';
import type { StepJob } from '../plans/index.js';
import { spawnSubagentTool } from '../policies/index.js';
import type { ToolOutcome } from '../tools/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import type { Doorbell } from './doorbell.js';
import { executeStepJob, failedOutcome, type StepJobHost } from './step-jobs-local.js';
import { cancelJob, deleteJob, insertJob, parseOutcome, readJob, type JobRow } from './step-jobs-rows.js';

/** What queueing a step job needs: the started cluster's connections, this worker's id and its own tools. */
export interface StepJobDeps {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly clock: Clock;
  /** How late an answer is seen when its NOTIFY was missed. */
  readonly pollMs: number;
  /** This worker's current id: where the answer is rung. */
  readonly workerId: () => string;
  /** This worker's tools: the inline fallback, and steps that must run beside their session. */
  readonly host: StepJobHost;
  readonly onError: (error: unknown) => void;
}

/** Wait until `ring` rings, `pollMs` passed or `signal` aborted, whichever comes first. */
function pause(deps: StepJobDeps, ring: string, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      off();
      deps.clock.clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const off = deps.doorbell.on(ring, done);
    const timer = deps.clock.setTimeout(done, deps.pollMs);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Run a statement of the wait; a failure (the database away for a moment) is reported and read as `fallback`. */
function tolerant<T>(deps: StepJobDeps, work: Promise<T>, fallback: T): Promise<T> {
  return work.catch((error: unknown) => {
    deps.onError(error);
    return fallback;
  });
}

/** What an aborted job resolves: the failure an aborted `executeTool` gives. */
async function withdraw(deps: StepJobDeps, id: number, signal: AbortSignal, startedAt: number) {
  const started = await tolerant(deps, cancelJob(deps.database, deps.doorbell, id), true);
  const error = toErrorInfo(abortReason(signal));
  return { ok: false, error, attempts: started ? 1 : 0, durationMs: deps.clock.now() - startedAt } as const;
}

/** Wait for job `id`'s answer; an abort withdraws it, an executor that died answers a failure (never a re-run). */
async function awaitAnswer(
  deps: StepJobDeps,
  job: StepJob,
  queued: { readonly id: number; readonly replyTo: string },
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const { id, replyTo } = queued;
  const startedAt = deps.clock.now();
  const failure = (message: string, attempts: number): ToolOutcome => ({
    ...failedOutcome({ code: 'tool_failed', message }, deps.clock.now() - startedAt),
    attempts,
  });
  const unreadable: JobRow = { status: 'unreadable', result: null, alive: true };
  for (;;) {
    if (signal.aborted) return withdraw(deps, id, signal, startedAt);
    const row = await tolerant(deps, readJob(deps.database, id), unreadable);
    if (row === undefined) return failure(`step "${job.toolCallId}" was withdrawn before it was answered`, 0);
    if (row.status === 'done' && row.result !== null) {
      await tolerant(deps, deleteJob(deps.database, id, 'done'), false);
      return parseOutcome(row.result);
    }
    // At most once: the row goes with this answer, so no worker runs the step again.
    if (
      row.status === 'running' &&
      !row.alive &&
      (await tolerant(deps, deleteJob(deps.database, id, 'running'), false))
    ) {
      return failure(`the worker running step ${job.toolCallId} stopped before it answered`, 1);
    }
    await pause(deps, `job:${replyTo}`, signal);
  }
}

/**
 * Run a plan step as a job any worker may take: a queued row, a ring, then the answer (rung back, and polled every
 * `pollMs`). When the row cannot be written (the database is unreachable) the step runs here instead, and so does
 * `spawn_subagent`, whose child session starts beside its parent. Never rejects.
 */
export async function runStepJob(deps: StepJobDeps, job: StepJob, signal: AbortSignal): Promise<ToolOutcome> {
  if (job.tool === spawnSubagentTool || signal.aborted) {
    return executeStepJob(deps.host, deps.clock, job, signal);
  }
  const replyTo = deps.workerId();
  let id: number;
  try {
    id = await insertJob(deps.database, job, replyTo);
  } catch (error) {
    deps.onError(error);
    return executeStepJob(deps.host, deps.clock, job, signal);
  }
  await deps.doorbell.ring('jobs').catch(() => undefined);
  return awaitAnswer(deps, job, { id, replyTo }, signal);
}
