import type { LiveSession } from './session-registry.js';
import { pausedPlanOf, heldPlans } from './session-pause.js';
import {
  isRunPaused,
  type PausedCallInfo,
  type RunResult,
  type RunSummary,
  endHeldPlan,
  assertPlanStepIds,
  type PlanRunResult,
  resumePlanRun,
  startPlanRun,
} from '../runner/index.js';
import {
  maxDurationMs,
  RuntimeError,
  type PauseState,
  storableTextProblem,
  isRuntimeError,
  assertInputBounds,
} from '../core/index.js';
import { isRunActive } from '../policies/index.js';
import { type RuntimeInternals, sessionControlOf, sessionScopeOf } from './runtime-internals.js';
import { activityOf, stateOf, type SessionState } from './session-machine.js';
import { writeOf } from './run-handle.js';
import { z } from 'zod';
import {
  buildPlanGraph,
  parsePlan,
  parsePlanOptions,
  type Plan,
  type PlanOptions,
  planStepIds,
  rootStepId,
} from '../plans/index.js';
import type { PlanRecord } from '../ledger/index.js';

/** A paused run, as `waitForEnd()` reports it: why it paused and the calls it waits for. */
export interface PausedRunInfo {
  readonly runId: string;
  readonly state: PauseState;
  readonly waiting: readonly {
    readonly toolCallId: string;
    readonly tool: string;
    readonly needs: 'approval' | 'deferred';
    /** Started before a crash with no recorded outcome: `approve` runs it again, `reject`, or supply its outcome. */
    readonly inDoubt?: boolean;
  }[];
}

/**
 * What `waitForEnd()` resolves with. `paused`: the run waits for `approve` or `supplyToolResult` (it has not
 * ended; waiting longer would only wait for the operator).
 */
export type WaitResult =
  | { readonly status: 'idle' }
  | { readonly status: 'ended'; readonly run: RunSummary }
  | ({ readonly status: 'paused' } & PausedRunInfo)
  | { readonly status: 'timeout' };

/** The `waitForEnd` timeout: `invalid_input` when it is not a number of milliseconds; at least 100. */
export function parseTimeout(options: { timeoutMs?: number } | undefined): number {
  const timeoutMs = options?.timeoutMs ?? 15_000;
  if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0 && timeoutMs <= maxDurationMs)) {
    throw new RuntimeError(
      'invalid_input',
      `waitForEnd: timeoutMs must be a number of milliseconds from 0 to ${maxDurationMs} (a year)`,
    );
  }
  return Math.max(100, timeoutMs);
}

/** What a paused run waits for; calls of the session's pause that were answered already are left out. */
function pausedInfo(
  runId: string,
  state: PauseState,
  calls: readonly (PausedCallInfo & { readonly settled?: boolean })[],
): PausedRunInfo {
  const waiting = calls
    .filter((call) => call.settled !== true)
    .map(({ toolCallId, tool, needs, inDoubt }) => ({
      toolCallId,
      tool,
      needs,
      ...(inDoubt === true ? { inDoubt } : {}),
    }));
  return { runId, state, waiting };
}

/** What `waitForEnd()` answers for a run's pause or end. */
function answerOf(result: RunResult): WaitResult {
  return isRunPaused(result)
    ? { status: 'paused', ...pausedInfo(result.runId, result.state, result.calls) }
    : { status: 'ended', run: result };
}

/**
 * The run ends a `waitForEnd()` saw (answered, or saw come while it waited): the next one answers `idle` instead of
 * the same end again. Kept here, by the summary the machine holds as the session's last end, so that seeing an end
 * is no step of the session's machine.
 */
const seenEnds = new WeakSet<RunResult>();

/**
 * The answer for a pause or end the machine adopted, once what the ledger holds of it is known: an agent run's end
 * or pause is written where the machine adopts it (run-handle.ts, `writeOf`), and answered with what that write
 * left in the ledger (a failed commit's rewrite) once its events were delivered. A plan run's pause or end was
 * recorded by the plan before it reached the machine: answered once the events emitted up to now were delivered.
 */
function answerWhenWritten(internals: RuntimeInternals, result: RunResult): Promise<WaitResult> {
  const write = writeOf(result);
  if (write === undefined) {
    return internals.bus.deliveredThrough(internals.bus.cursor).then(() => answerOf(result));
  }
  return write.then((written) => {
    seenEnds.add(written);
    return answerOf(written);
  });
}

/**
 * Wait for the machine's next `run.settled` (a run's or a plan run's pause or end). The end is seen at once (the
 * next `waitForEnd()` does not answer it again); the answer comes once it is written (`answerWhenWritten`).
 */
function waitOn(internals: RuntimeInternals, session: LiveSession, timeoutMs: number): Promise<WaitResult> {
  const { clock } = internals.services;
  return new Promise<WaitResult>((resolve) => {
    const subscription = session.actor.on('run.settled', ({ result }) => {
      subscription.unsubscribe();
      clock.clearTimeout(timer);
      seenEnds.add(result);
      void answerWhenWritten(internals, result).then(resolve);
    });
    const timer = clock.setTimeout(() => {
      subscription.unsubscribe();
      resolve({ status: 'timeout' });
    }, timeoutMs);
  });
}

/** Wait for a live session's active run, if any. */
export function waitForRun(
  internals: RuntimeInternals,
  session: LiveSession,
  timeoutMs: number,
): Promise<WaitResult> {
  const snapshot = session.actor.getSnapshot();
  const { pause, run } = snapshot.context;
  if (pause !== null && run !== null) {
    return Promise.resolve({ status: 'paused', ...pausedInfo(run.runId, pause.state, pause.calls) });
  }
  // A paused plan run holds the session like a paused run: its waiting steps are the calls it waits for.
  const plan = pausedPlanOf(snapshot.context);
  if (plan !== undefined && (run === null || run.runId === plan.runId)) {
    const waiting = plan.steps.map((step) => ({
      toolCallId: step.stepId,
      tool: step.tool,
      needs: 'approval' as const,
    }));
    return Promise.resolve({ status: 'paused', runId: plan.runId, state: 'awaiting_approval', waiting });
  }
  // An undo is a run of the session's machine, but no run `waitForEnd()` reports: it waits for none.
  if (!isRunActive(activityOf(snapshot)) || run?.kind === 'undo') {
    const ended = snapshot.context.lastEnd;
    if (ended === undefined || seenEnds.has(ended)) return Promise.resolve({ status: 'idle' });
    seenEnds.add(ended);
    // Its close may still be committing: the answer is what the ledger holds once it did.
    const write = writeOf(ended);
    if (write !== undefined) return answerWhenWritten(internals, ended);
    return Promise.resolve({ status: 'ended', run: ended });
  }
  return waitOn(internals, session, timeoutMs);
}

/** What `status()` reports. */
export interface SessionStatus {
  readonly state: SessionState;
  readonly runId?: string;
  readonly queued: number;
}

/**
 * Abort what session `key` runs: a paused plan (resolves once recorded), or its active run of any kind (an agent
 * run, a plan run, an undo) through its machine. Resolves true when something was aborted.
 */
export function abortSession(internals: RuntimeInternals, key: string, reason: unknown): Promise<boolean> {
  if (typeof reason !== 'string') {
    return Promise.reject(new RuntimeError('invalid_input', 'abort: reason must be a string'));
  }
  const problem = storableTextProblem(reason);
  if (problem !== undefined)
    return Promise.reject(new RuntimeError('invalid_input', `abort: reason ${problem}`));
  const live = internals.registry.live(key);
  if (live === undefined) return Promise.resolve(false);
  const snapshot = live.actor.getSnapshot();
  // A plan run or an undo running beside a paused plan is the machine's run: the abort reaches it too.
  const running = snapshot.value === 'running';
  // A paused plan holds the session like a paused run: abort ends it (resolves once recorded).
  const paused = pausedPlanOf(snapshot.context);
  if (paused !== undefined) {
    if (running) live.actor.send({ type: 'ABORT', status: 'aborted', reason });
    const ended = { sessionKey: key, runId: paused.runId, status: 'aborted' as const, reason };
    const control = sessionControlOf(internals, live);
    return endHeldPlan(internals.services, internals.work, control, ended).then(() => true);
  }
  if (!isRunActive(activityOf(snapshot))) return Promise.resolve(false);
  live.actor.send({ type: 'ABORT', status: 'aborted', reason });
  return Promise.resolve(true);
}

/** Where session `key` stands: idle when it is not live. */
export function sessionStatus(internals: RuntimeInternals, key: string): SessionStatus {
  const live = internals.registry.live(key);
  if (live === undefined) return { state: 'idle', queued: 0 };
  const snapshot = live.actor.getSnapshot();
  const activity = activityOf(snapshot);
  // A plan run the session holds (paused first) is its run when no agent run is.
  const { context } = snapshot;
  const runId = context.run?.runId ?? (pausedPlanOf(context) ?? heldPlans(context)[0])?.runId;
  return {
    state: stateOf(activity),
    queued: context.queue.length,
    ...(runId === undefined ? {} : { runId }),
  };
}

/**
 * `session.executePlan`: validate the plan (a cycle or a dangling dependency is refused before anything runs),
 * then run it as a run of the session (its machine runs one at a time). `preview` only resolves and validates.
 */
export async function executePlan(
  internals: RuntimeInternals,
  session: LiveSession,
  planInput: unknown,
  optionsInput: unknown,
): Promise<PlanRunResult> {
  const plan = parsePlan(planInput);
  const options = parsePlanOptions(optionsInput);
  const graph = buildPlanGraph(plan);
  const runId = internals.services.ids('run');
  return startPlanRun(sessionScopeOf(internals, session), { runId, plan, graph, options });
}

const approvePlanSchema = z
  .object({
    runId: z.string().min(1),
    stepIds: z.array(z.string().min(1)).default([]),
    reject: z.array(z.string().min(1)).default([]),
    // The outcome the operator knows of a step in doubt (a crash cut it while its tool ran): its result.
    supply: z.array(z.object({ stepId: z.string().min(1), output: z.unknown() }).strict()).default([]),
  })
  .strict()
  .refine(
    (input) => input.stepIds.length + input.reject.length + input.supply.length > 0,
    'name at least one step to approve, reject or supply',
  )
  .refine((input) => {
    const named = [...input.stepIds, ...input.reject, ...input.supply.map((entry) => entry.stepId)];
    return new Set(named).size === named.length;
  }, 'a step can be approved, rejected or supplied once');

/** What `approvePlan()` takes: the paused plan run, the step ids approved and those rejected. */
export type ApprovePlanInput = z.input<typeof approvePlanSchema>;

/** The plan and options of a recorded plan run; a record that no longer parses is `ledger_corrupt`. */
function recordedPlan(record: PlanRecord): { plan: Plan; options: PlanOptions } {
  try {
    return { plan: parsePlan(record.plan), options: parsePlanOptions(record.options) };
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    throw new RuntimeError('ledger_corrupt', `plans row "${record.runId}": ${error.message}`, {
      details: { table: 'plans', row: record.runId },
    });
  }
}

/**
 * `session.approvePlan`: approve (and reject) steps of a plan run that waits, then resume it where it stopped.
 * Completed steps never run again; rejected ones fail with `cancelled` and block what depends on them.
 */
export async function approvePlan(
  internals: RuntimeInternals,
  session: LiveSession,
  input: ApprovePlanInput,
): Promise<PlanRunResult> {
  assertInputBounds('approvePlan', input, 'approvePlan');
  const parsed = approvePlanSchema.safeParse(input);
  if (!parsed.success)
    throw new RuntimeError('invalid_input', `approvePlan: ${z.prettifyError(parsed.error)}`);
  const { runId, stepIds, reject, supply } = parsed.data;
  const { ledger } = internals.services;
  const [record, run] = await Promise.all([ledger.getPlan(runId), ledger.getRun(runId)]);
  if (record === undefined || run === undefined || record.sessionKey !== session.key) {
    throw new RuntimeError('not_found', `approvePlan: session "${session.key}" has no plan run "${runId}"`);
  }
  if (run.status !== 'awaiting_approval' || internals.work.resumingPlans.has(runId)) {
    throw new RuntimeError('invalid_input', `approvePlan: plan run "${runId}" is not waiting for approval`);
  }
  const { plan, options } = recordedPlan(record);
  const ids = planStepIds(plan);
  const supplied = supply.map((entry) => entry.stepId);
  assertPlanStepIds([...stepIds, ...reject, ...supplied], (id) => rootStepId(id, ids) !== undefined);
  const decided = { record, run, plan, options, stepIds, reject, supply };
  return resumePlanRun(sessionScopeOf(internals, session), decided);
}
