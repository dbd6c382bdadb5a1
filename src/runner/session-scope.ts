import { RuntimeError } from '../core/index.js';
import type { LaneServices, RunServices } from './run-services.js';
import type { RunWork } from './run-work.js';
import type { SessionControl } from './session-control.js';

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
