import { RuntimeError } from '../core/index.js';
import type { RunStatus } from '../core/index.js';

/** The statuses a run ends with when its signal is aborted. */
export type AbortStatus = Extract<RunStatus, 'aborted' | 'interrupted' | 'timeout'>;

/** The abort reason for a run's signal: a `cancelled` (or `timeout`) RuntimeError that says how the run ends. */
export function runAbortReason(status: AbortStatus, message: string): RuntimeError {
  return new RuntimeError(status === 'timeout' ? 'timeout' : 'cancelled', message, { details: { status } });
}

/** How a run whose signal aborted ends: the status carried by the reason, `aborted` by default. */
export function abortStatusOf(signal: AbortSignal): AbortStatus {
  const reason: unknown = signal.reason;
  if (reason instanceof RuntimeError) {
    const status = reason.details?.['status'];
    if (status === 'interrupted' || status === 'timeout') return status;
  }
  return 'aborted';
}
