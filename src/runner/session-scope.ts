import { RuntimeError, type EventInput, type PauseState } from '../core/index.js';
import type { LaneServices, RunServices } from './run-services.js';
import type { RunWork } from './run-work.js';
import type { RunSummary } from './run-request.js';

/** What a plan run, an undo or an operator decision of one live session works with. */
export interface SessionScope {
  readonly services: RunServices;
  /** The plan runs and undos in progress, which `abort()` and `close()` reach. */
  readonly work: RunWork;
  /** The live session. */
  readonly control: SessionControl;
}

/** Throw `runtime_closed` once the runtime stopped taking work. */
export function assertAccepting(services: Pick<LaneServices, 'accepting'>): void {
  if (!services.accepting()) throw new RuntimeError('runtime_closed', 'the runtime is closed');
}

/**
 * One session never has two open runs: a paused run (or paused plan) holds the session until it is decided,
 * supplied or aborted, so a plan started meanwhile is refused (`rejected_busy`) rather than queued behind a
 * pause that may last a day.
 */
export function assertNoPausedRun(control: SessionControl, what: string): void {
  const paused = control.pausedRun();
  if (paused === undefined) return;
  throw new RuntimeError(
    'rejected_busy',
    `${what}: run "${paused.runId}" of this session is paused (${paused.state}); decide, supply or abort it first`,
  );
}

/** A call of the session's paused run that waits for an operator's decision or a supplied result. */
export interface WaitingCall {
  readonly runId: string;
  readonly toolCallId: string;
  readonly tool: string;
  readonly turn: number;
  readonly position: number;
}

/** A plan step a paused plan waits for: approve or reject it with `approvePlan`. */
export interface PlanStepWait {
  readonly stepId: string;
  readonly tool: string;
  /** The request the step waits on (absent in snapshots from before requests had ids: the step's id). */
  readonly approvalId?: string;
}

/** A plan run the session holds paused: the steps it waits for. */
export interface PausedPlan {
  readonly runId: string;
  readonly steps: readonly PlanStepWait[];
}

/** How a plan run ended, for its session (`SessionControl.releasePlan`). */
export interface PlanEnd {
  readonly summary: RunSummary;
  readonly written: Promise<void>;
}

/**
 * What plan runs, undo and operator decisions need of a live session, implemented above `runner/` over its actor:
 * its events (delivered at once, not held for a run's adoption) and the machine events of plans and pauses.
 */
export interface SessionControl {
  /** The session's key. */
  readonly key: string;
  /** Stamp, record and deliver an event on this session. */
  emit(event: EventInput): void;
  /** Resolves once every event emitted so far was delivered to the runtime's streams (or its write failed). */
  delivered(): Promise<void>;
  /** The run or plan run of this session that is paused now, and how. */
  pausedRun(): { readonly runId: string; readonly state: PauseState } | undefined;
  /** The plan run this session holds paused, if any. */
  pausedPlan(): PausedPlan | undefined;
  /** The session holds plan run `runId` as running (messages queue): `PLAN.HELD`. */
  holdPlan(runId: string): void;
  /**
   * The session holds the plan paused on `steps` (`PLAN.PAUSED`), so its snapshot keeps it. `written` settles once
   * the pause is recorded and its events delivered: `waitForEnd()` answers the pause then.
   */
  pausePlan(runId: string, steps: readonly PlanStepWait[], at: number, written: Promise<void>): void;
  /**
   * Run `body` as a run of kind `kind` of the session: the session machine starts it on entering `running`, at
   * once when no run is active, else after the active run (and the plan runs and undos handed it before). Its
   * signal is the run's: `abort()` and an interrupting message reach it as they reach an agent run. Settles as
   * `body` does.
   */
  run<T>(kind: 'plan' | 'undo', runId: string, body: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Persist the session's snapshot. */
  persist(): Promise<void>;
  /**
   * The session lets the plan go, its queue drains (`PLAN.ENDED`): with the run's end when it ended, whose
   * `written` settles once the close is recorded and `run.ended` delivered (`waitForEnd()` answers the end then).
   */
  releasePlan(runId: string, ended?: PlanEnd): void;
  /**
   * Answer waiting call `call` of the paused run with an answer of kind `answer` (the session machine's DECIDE):
   * returns the pause state after it (absent when nothing waits and the run goes on). An answer the machine
   * refuses throws its `RuntimeError` (`not_found`, `invalid_input`) and changes nothing.
   */
  answerCall(call: WaitingCall, answer: 'approval' | 'deferred'): { readonly state?: PauseState };
}
