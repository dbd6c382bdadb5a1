import { isSettledWrite, settledWrite } from '../core/index.js';

/**
 * The ledger writes a run issued in the background (its turns): the run's commit waits for them, and a run whose
 * turn was lost cannot end `completed`.
 */
export interface RunWrites {
  /** Track a write; its failure is also reported by the caller. */
  track(write: Promise<void>): void;
  /** Resolves once every tracked write settled: with the first failure, or undefined when all were durable. */
  settled(): Promise<unknown>;
}

/** No writes yet. A write already durable when issued (the memory ledger's) is not kept: nothing to wait for. */
export function createRunWrites(): RunWrites {
  let pending: Promise<void>[] = [];
  let failure: { readonly error: unknown } | undefined;
  const failed = (error: unknown): void => {
    failure ??= { error };
  };
  const drain = async (): Promise<unknown> => {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      await Promise.allSettled(batch);
    }
    return failure?.error;
  };
  return {
    track(write) {
      if (isSettledWrite(write)) return;
      pending.push(write);
      write.catch(failed);
    },
    settled() {
      // Nothing in flight (every write was durable when issued): the shared settled promise, no frame to wait on.
      if (pending.length === 0 && failure === undefined) return settledWrite;
      return drain();
    },
  };
}
