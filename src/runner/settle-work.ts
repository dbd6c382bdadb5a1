import type { Clock } from '../core/index.js';
import { createDeferred } from '../core/index.js';
import { RuntimeError } from '../core/index.js';

/** Work in progress that `runtime.close()` waits for: its abort, and when it has recorded how it stopped. */
export interface WorkInProgress {
  readonly controller: AbortController;
  readonly finished: Promise<void>;
}

/**
 * Let `works` finish within `timeoutMs`, then abort those still running (`cancelled`: the runtime is closing)
 * and wait for each to record how it stopped, so nothing is left half-written when the ledger closes.
 */
export async function settleWork(
  clock: Clock,
  works: readonly WorkInProgress[],
  timeoutMs: number,
): Promise<void> {
  if (works.length === 0) return;
  const finished = Promise.all(works.map((work) => work.finished));
  const expired = createDeferred<void>();
  const timer = clock.setTimeout(() => expired.resolve(), timeoutMs);
  await Promise.race([finished, expired.promise]);
  clock.clearTimeout(timer);
  for (const work of works) work.controller.abort(new RuntimeError('cancelled', 'the runtime is closing'));
  await finished;
}
