import type { ErrorInfo } from '../core/index.js';
import type { PauseState, RunStatus } from '../core/index.js';

/** How a run ended, as `waitForEnd()` and `run.ended` report it. */
export interface RunSummary {
  readonly runId: string;
  readonly status: RunStatus;
  readonly error?: ErrorInfo;
  /** All assistant text of the run (the partial output when it did not complete). */
  readonly text: string;
  readonly messageIds: readonly string[];
  readonly startedAt: number;
  readonly endedAt: number;
}

/** A call of a paused run that waits: for an operator (`approval`) or for a result from outside (`deferred`). */
export interface PausedCallInfo {
  readonly toolCallId: string;
  readonly tool: string;
  readonly needs: 'approval' | 'deferred';
  /** A call in doubt after a crash: approved it runs again, rejected the model hears its outcome is unknown, or
   * its outcome can be supplied. */
  readonly inDoubt?: boolean;
  /** Where the call is recorded: the run's tool turn and the call's position in it. */
  readonly turn: number;
  readonly position: number;
}

/** A run that paused instead of ending: why, and the calls it waits for. */
export interface RunPaused {
  readonly runId: string;
  readonly state: PauseState;
  readonly calls: readonly PausedCallInfo[];
  readonly at: number;
}

/** What executing a run resolves with: it ended, or it paused. */
export type RunResult = RunSummary | RunPaused;

/** True when a run paused. */
export function isRunPaused(result: RunResult): result is RunPaused {
  return 'calls' in result;
}
