import { isRuntimeError, RuntimeError } from '../core/index.js';
import type { ShutdownSteps } from './shutdown.js';

/**
 * Closing failed part way (a write of the last snapshots met a full disk): still stop the timers, mark the
 * runtime closed, close the lanes and release the ledger, each even when one before fails, so the file handles and
 * the writer lock never outlive `close()` (a reopen in this process would be `ledger_locked`). Rethrows the first
 * failure, coded: a RuntimeError as it is, anything else `internal` with the original as `cause`.
 */
export async function releaseAfterFailedShutdown(steps: ShutdownSteps, failure: unknown): Promise<never> {
  const releases: (() => void | Promise<void>)[] = [
    steps.stopTimers,
    steps.markClosed,
    steps.closeLanes,
    steps.releaseLedger,
  ];
  for (const release of releases) {
    try {
      await release();
    } catch {
      // The first failure is the one close() reports; the releases after it still run.
    }
  }
  if (isRuntimeError(failure)) throw failure;
  const said = failure instanceof Error ? failure.message : String(failure);
  throw new RuntimeError('internal', `close: ${said}`, { cause: failure });
}
