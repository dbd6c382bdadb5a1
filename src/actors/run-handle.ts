import type { Clock } from '../core/index.js';
import { runAbortReason, type AbortStatus } from '../runner/index.js';
import type { RunPhase } from '../runner/index.js';
import type {
  ExecuteRun,
  ExecutedRun,
  RunPort,
  RunRequest,
  RunSummary,
  SessionPort,
} from '../runner/index.js';
import { isRunEnding, isRunPaused, isRunPausing, type RunResult } from '../runner/index.js';
import { createSteerInbox, type SteerInbox, type SteerMessage } from '../runner/index.js';
import type { ActiveRun, SessionEvent } from './session-context.js';

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

/** What became of a run's report to its session actor. */
export interface RunReported {
  /** The run's end or pause; absent when it could not start. */
  readonly result?: RunResult;
  /** True when the actor took the report in (its snapshot shows it); false when it was stopped. */
  readonly adopted: boolean;
}

/** Where a run's end goes: the session actor, while it still runs. */
export interface RunReport {
  readonly send: (event: SessionEvent) => void;
  /** False once the session actor was stopped (nothing is sent to it then). */
  readonly active: () => boolean;
  /** Told once the report was handed over (or could not be). */
  readonly reported: (reported: RunReported) => void;
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
): { readonly event: SessionEvent; readonly result: RunResult } {
  if (isRunPausing(executed)) {
    const { paused } = executed;
    writes.set(
      paused,
      executed.record().then(() => paused),
    );
    return { event: { type: 'RUN.PAUSED', paused, unadmitted, at: paused.at }, result: paused };
  }
  if (isRunEnding(executed)) {
    const { summary } = executed;
    writes.set(summary, executed.close(corrected));
    return { event: { type: 'RUN.DONE', summary, unadmitted, at: summary.endedAt }, result: summary };
  }
  if (isRunPaused(executed)) {
    return { event: { type: 'RUN.PAUSED', paused: executed, unadmitted, at: executed.at }, result: executed };
  }
  return {
    event: { type: 'RUN.DONE', summary: executed, unadmitted, at: executed.endedAt },
    result: executed,
  };
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
  const send = (event: SessionEvent, result?: RunResult): void => {
    handle.settled = true;
    const adopted = report.active();
    if (adopted) report.send(event);
    report.reported({ ...(result === undefined ? {} : { result }), adopted });
  };
  // A failed commit's rewrite reaches the machine as a correction of the end it adopted (RUN.CORRECTED).
  const corrected = (summary: RunSummary): void => {
    if (report.active()) report.send({ type: 'RUN.CORRECTED', summary });
  };
  const { executeRun, portOf } = executor;
  executeRun(requestFor(sessionKey, run, handle), portFor(sessionKey, portOf, handle)).then(
    (executed) => {
      const { event, result } = reportOf(executed, handle.steering.take(), corrected);
      send(event, result);
    },
    () => send({ type: 'RUN.NOT_STARTED', at: clock.now() }),
  );
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
