import type { LiveSession } from './session-registry.js';
import { pausedPlanOf, heldPlans } from './session-pause.js';
import {
  isRunPaused,
  isRunEnding,
  isRunPausing,
  type PausedCallInfo,
  type RunResult,
  type RunSummary,
  endHeldPlan,
  assertPlanStepIds,
  type PlanRunResult,
  resumePlanRun,
  startPlanRun,
  runAbortReason,
  type AbortStatus,
  type RunPhase,
  type ExecuteRun,
  type ExecutedRun,
  type RunPort,
  type RunRequest,
  type SessionPort,
  createSteerInbox,
  type SteerInbox,
  type SteerMessage,
} from '../runner/index.js';
import {
  maxDurationMs,
  RuntimeError,
  type PauseState,
  storableTextProblem,
  isRuntimeError,
  assertInputBounds,
} from '../core/index.js';
import type { Clock } from '../core/index.js';
import { isRunActive } from '../policies/index.js';
import { type RuntimeInternals, sessionControlOf, sessionScopeOf } from './runtime-internals.js';
import { activityOf, stateOf, type SessionState } from './session-machine.js';
import type { ActiveRun, PlanStepWait, SessionEvent } from './session-context.js';
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

/**
 * The live side of a session's active run, a plain object the session machine owns: its AbortController, its
 * steering inbox and its phase as data (a phase change is no machine transition).
 */
export interface RunHandle {
  readonly controller: AbortController;
  readonly steering: SteerInbox;
  phase: RunPhase;
  /** Set once the run's promise settled: there is nothing left to abort. */
  settled: boolean;
}

/**
 * The handle of each active run, keyed by the context's run object: that object lives exactly as long as the run
 * (a resumed run is a new object), so the serialisable snapshot holds no handle and a hydrated one has none.
 */
const handles = new WeakMap<ActiveRun, RunHandle>();

/** Where a run's end goes: the session actor, while it still runs. */
export interface RunReport {
  readonly send: (event: SessionEvent) => void;
  /** False once the session actor was stopped (nothing is sent to it then). */
  readonly active: () => boolean;
}

/**
 * The writes of the ends and pauses the machines adopted, by the result adopted: each resolves with what the ledger
 * holds (the end a failed commit was rewritten as), once the events announcing it were delivered. `waitForEnd()`
 * answers with it. Kept beside the result, not in the machine's context (a promise is no snapshot data).
 */
const writes = new WeakMap<RunResult, Promise<RunResult>>();

/** The write of an end or pause a machine adopted, while it is known (undefined: nothing of it is being written). */
export function writeOf(result: RunResult): Promise<RunResult> | undefined {
  return writes.get(result);
}

/**
 * A plan run's end, which the plan records itself: `written` settles once its close was recorded and its
 * `run.ended` delivered. Told before the machine adopts the end (PLAN.ENDED), so `waitForEnd()` answers it then.
 */
export function planEndWritten(summary: RunSummary, written: Promise<void>): void {
  writes.set(
    summary,
    written.then(() => summary),
  );
}

/** Abort the handle's run unless it is already aborted. */
function abortHandle(handle: RunHandle, status: AbortStatus, reason: string): void {
  if (!handle.controller.signal.aborted) handle.controller.abort(runAbortReason(status, reason));
}

/** The run request for `run` of `sessionKey`, bound to its handle. */
function requestFor(sessionKey: string, run: ActiveRun, handle: RunHandle): RunRequest {
  return {
    sessionKey,
    run,
    signal: handle.controller.signal,
    steering: handle.steering,
    abort: (status, reason) => abortHandle(handle, status, reason),
  };
}

/**
 * The port of `run`: its session's port, taken when the machine starts the run (the session is in the registry
 * before its actor starts, a hydrating one too) and kept, so the run's events go to that session even after a
 * ledger fault stopped it; its phase is kept on its handle.
 */
function portFor(
  sessionKey: string,
  portOf: (sessionKey: string) => SessionPort,
  handle: RunHandle,
): RunPort {
  const session = portOf(sessionKey);
  return {
    key: sessionKey,
    emit: (event) => session.emit(event),
    durable: () => session.durable?.() ?? Promise.resolve(),
    delivered: () => session.delivered?.() ?? Promise.resolve(),
    setPhase: (phase) => {
      handle.phase = phase;
    },
  };
}

/**
 * The session event that reports `executed`, its end or pause written first in the same synchronous stretch: the
 * caller sends the event at once, so the machine adopts the outcome before anything reacts to its writes (the bus
 * delivers its events once durable, and a subscriber acts on them after this stretch).
 */
function reportOf(
  executed: ExecutedRun,
  unadmitted: SteerMessage[],
  corrected: (summary: RunSummary) => void,
): SessionEvent {
  if (isRunPausing(executed)) {
    const { paused } = executed;
    writes.set(
      paused,
      executed.record().then(() => paused),
    );
    return { type: 'RUN.PAUSED', paused, unadmitted, at: paused.at };
  }
  if (isRunEnding(executed)) {
    const { summary } = executed;
    writes.set(summary, executed.close(corrected));
    return { type: 'RUN.DONE', summary, unadmitted, at: summary.endedAt };
  }
  if (isRunPaused(executed)) return { type: 'RUN.PAUSED', paused: executed, unadmitted, at: executed.at };
  return { type: 'RUN.DONE', summary: executed, unadmitted, at: executed.endedAt };
}

/**
 * Start the session's active run: keep its handle, execute it, and report its end (RUN.DONE, RUN.PAUSED) or that
 * it could not start (RUN.NOT_STARTED). A paused run aborted or interrupted meanwhile comes back only to end.
 */
export function startRun(
  executor: { readonly executeRun: ExecuteRun; readonly portOf: (sessionKey: string) => SessionPort },
  clock: Clock,
  sessionKey: string,
  run: ActiveRun,
  report: RunReport,
): void {
  const handle: RunHandle = {
    controller: new AbortController(),
    steering: createSteerInbox(),
    // A plan run or an undo takes no steering: busy until it stops, as a run settling its end.
    phase: run.kind === undefined || run.kind === 'agent' ? 'starting' : 'settling',
    settled: false,
  };
  handles.set(run, handle);
  const abort = run.resume?.abort;
  if (abort !== undefined) abortHandle(handle, abort.status, abort.reason);
  const send = (event: SessionEvent): void => {
    handle.settled = true;
    if (report.active()) report.send(event);
  };
  // A failed commit's rewrite reaches the machine as a correction of the end it adopted (RUN.CORRECTED).
  const corrected = (summary: RunSummary): void => {
    if (report.active()) report.send({ type: 'RUN.CORRECTED', summary });
  };
  const { executeRun, portOf } = executor;
  executeRun(requestFor(sessionKey, run, handle), portFor(sessionKey, portOf, handle)).then(
    (executed) => {
      send(reportOf(executed, handle.steering.take(), corrected));
    },
    () => send({ type: 'RUN.NOT_STARTED', at: clock.now() }),
  );
}

/** The run starts an actor's steps made while `startingAfter` ran them, to start once it is done. */
const heldStarts = new WeakMap<object, (() => void)[]>();

/** Start a run the machine of `actor` entered `running` for, or hold it while `startingAfter` runs its steps. */
export function startOrHold(actor: object, start: () => void): void {
  const held = heldStarts.get(actor);
  if (held === undefined) start();
  else held.push(start);
}

/**
 * Run `steps` (events sent to the actor), then `after` with their result, and only then start the runs the steps
 * started: an admission announces its message before the run it starts announces itself. The runs start even
 * when `steps` or `after` throw (the machine is in `running` either way).
 */
export function startingAfter<T>(actor: object, steps: () => T, after: (value: T) => void): T {
  const held: (() => void)[] = [];
  heldStarts.set(actor, held);
  try {
    const value = steps();
    after(value);
    return value;
  } finally {
    heldStarts.delete(actor);
    for (const start of held) start();
  }
}

/**
 * Keep a handle for a run that is only being closed (a paused plan an abort ends): busy and not steerable until
 * its end is recorded, with nothing left to abort.
 */
export function closeRun(run: ActiveRun): void {
  const controller = new AbortController();
  handles.set(run, { controller, steering: createSteerInbox(), phase: 'settling', settled: true });
}

/** The phase of the session's active run (`starting` until the run says otherwise, or without a handle). */
export function phaseOf(run: ActiveRun | null): RunPhase {
  return run === null ? 'starting' : (handles.get(run)?.phase ?? 'starting');
}

/** Hand a steer message to the active run for its next boundary. */
export function steerRun(run: ActiveRun | null, message: SteerMessage): void {
  if (run !== null) handles.get(run)?.steering.push(message);
}

/** Abort the active run (an abort, an interrupting message, or the session actor stopping while it runs). */
export function abortRun(run: ActiveRun | null, status: AbortStatus, reason: string): void {
  const handle = run === null ? undefined : handles.get(run);
  if (handle !== undefined && !handle.settled) abortHandle(handle, status, reason);
}

/** A paused run, as `waitForEnd()` reports it: why it paused and the calls it waits for. */
export interface PausedRunInfo {
  readonly runId: string;
  readonly state: PauseState;
  readonly waiting: readonly {
    readonly toolCallId: string;
    /** The request it waits on: pass it to `approve({ approvalId })` (a plan step: `approvePlan({ approvalIds })`). */
    readonly approvalId: string;
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
    .map(({ toolCallId, approvalId, tool, needs, inDoubt }) => ({
      toolCallId,
      approvalId: approvalId ?? toolCallId,
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
 * or pause is written where the machine adopts it (`writeOf`, above), and answered with what that write
 * left in the ledger (a failed commit's rewrite) once its events were delivered. A plan run records its own pause
 * or end: answered once that was recorded and its events delivered (`written`, which the plan hands the machine).
 */
function answerWhenWritten(result: RunResult, written: Promise<void> | undefined): Promise<WaitResult> {
  const write = writeOf(result);
  if (write === undefined) return (written ?? Promise.resolve()).then(() => answerOf(result));
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
    const subscription = session.actor.on('run.settled', ({ result, written }) => {
      subscription.unsubscribe();
      clock.clearTimeout(timer);
      seenEnds.add(result);
      void answerWhenWritten(result, written).then(resolve);
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
      approvalId: step.approvalId ?? step.stepId,
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
    return answerWhenWritten(ended, undefined);
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
    // The requests these decisions answer (`approvalId` of the events): see `assertAnswersWaiting`.
    approvalIds: z.array(z.string().min(1)).optional(),
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
 * With `approvalIds`, an `approvePlan` answers exactly those requests: each must be the one a step it decides waits
 * on now, and each decided step that waits must be named through its own. An answer to an earlier request (a re-delivered
 * event from before a restart left the step in doubt) is refused `not_found` instead of running the step twice.
 */
function assertAnswersWaiting(
  runId: string,
  decided: readonly string[],
  approvalIds: readonly string[],
  steps: readonly PlanStepWait[],
): void {
  const current = new Map(steps.map((step) => [step.stepId, step.approvalId ?? step.stepId]));
  const answered = new Set(decided.flatMap((id) => (current.has(id) ? [current.get(id) ?? id] : [])));
  const listed = new Set(approvalIds);
  const stale = approvalIds.find((id) => !answered.has(id));
  const unnamed = [...answered].find((id) => !listed.has(id));
  if (stale === undefined && unnamed === undefined) return;
  const message =
    stale === undefined
      ? `approvePlan: request "${unnamed}" of plan run "${runId}" is decided but approvalIds does not name it`
      : `approvePlan: no step decided here waits on request "${stale}" in plan run "${runId}"`;
  throw new RuntimeError('not_found', message);
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
  const { runId, stepIds, reject, supply, approvalIds } = parsed.data;
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
  if (approvalIds !== undefined) {
    const paused = pausedPlanOf(session.actor.getSnapshot().context);
    const steps = paused?.runId === runId ? paused.steps : [];
    assertAnswersWaiting(runId, [...stepIds, ...reject, ...supplied], approvalIds, steps);
  }
  const decided = { record, run, plan, options, stepIds, reject, supply };
  return resumePlanRun(sessionScopeOf(internals, session), decided);
}
