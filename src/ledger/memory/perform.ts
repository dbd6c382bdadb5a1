import { RuntimeError, settledWrite } from '../../core/index.js';

/** The memory ledger's way to run synchronous work and report through a promise (rejects once closed). */
export type Perform = <T>(work: () => T) => Promise<T>;

/** How every store of one memory ledger runs its work, and the switch that closes them all. */
export interface MemoryPerform {
  readonly perform: Perform;
  /** Refuse every later call with `runtime_closed`; closing twice is harmless. */
  readonly close: () => Promise<void>;
}

/**
 * Create the shared runner of a memory ledger's stores. Work runs synchronously, so a read called after a write
 * sees it, and reports through the returned promise (a closed ledger rejects instead of throwing). Writes resolve to
 * nothing: they share one settled promise instead of allocating one each (the hot path), `settledWrite`, on which
 * a caller that only watches for a failure (`catch`) allocates nothing either.
 */
export function createMemoryPerform(): MemoryPerform {
  let closed = false;
  const done = settledWrite as Promise<undefined>;
  const perform = <T>(work: () => T): Promise<T> => {
    if (closed) return Promise.reject(new RuntimeError('runtime_closed', 'the ledger is closed'));
    try {
      const result = work();
      return result === undefined ? (done as Promise<T>) : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  return {
    perform,
    close: () => {
      closed = true;
      return Promise.resolve();
    },
  };
}
