import { createRunJobs, type RunJobs } from './run-request.js';
import type { WorkInProgress } from './execute-run.js';

/** A plan run executing now: its abort, and a promise settled once it stopped. */
export type ActivePlan = WorkInProgress;

/** The plan runs executing now, per session, so `abort()` and `close()` reach them. */
export type ActivePlans = Map<string, Map<string, ActivePlan>>;

/** An undo running now: its abort (which `abort()` and `close()` reach) and its session. */
export interface ActiveUndo extends WorkInProgress {
  readonly sessionKey: string;
}

/** The plan runs and undos in progress of a runtime, which `abort()` and `close()` reach. */
export interface RunWork {
  /** Plan runs executing now, per session. */
  readonly plans: ActivePlans;
  /** Undos running now: `close()` waits for them, then aborts them; `session.abort()` aborts its session's. */
  readonly undos: Set<ActiveUndo>;
  /** Plan runs an `approvePlan` is resuming (a second approval of the same pause is refused). */
  readonly resumingPlans: Set<string>;
  /** Plan runs and undos handed to their session machine and not started yet. */
  readonly jobs: RunJobs;
}

/** No work in progress yet. */
export function createRunWork(): RunWork {
  return { plans: new Map(), undos: new Set(), resumingPlans: new Set(), jobs: createRunJobs() };
}

/** Track a plan run executing now; returns what stops tracking it. */
export function trackPlan(work: RunWork, sessionKey: string, runId: string, plan: ActivePlan): () => void {
  let runs = work.plans.get(sessionKey);
  if (runs === undefined) {
    runs = new Map();
    work.plans.set(sessionKey, runs);
  }
  runs.set(runId, plan);
  return () => {
    runs.delete(runId);
    if (runs.size === 0) work.plans.delete(sessionKey);
  };
}
