import type { ErrorInfo } from '../core/errors.js';
import type { RunStatus } from '../core/events.js';

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
