import type { Ledger } from '../../ledger/index.js';

/** A ledger whose calls are watched, and a way to wait until they have gone quiet. */
export interface WatchedLedger {
  readonly ledger: Ledger;
  /**
   * Resolves once no ledger call started or settled for a few event-loop turns: every write the last timer led to
   * has committed, and the code awaiting it has run and issued its own calls (waited for too). A call that waits
   * on the simulated clock makes no progress until the clock moves, so it does not hold this up.
   */
  quiet(): Promise<void>;
}

/** Event-loop turns without a ledger call starting or settling that count as quiet (a commit takes one). */
const quietTurns = 4;
/** A bound on the turns one wait takes, so a ledger that never goes quiet slows the show instead of hanging it. */
const maxTurns = 10_000;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Watch every call of `ledger` that answers with a promise. */
export function watchLedgerActivity(ledger: Ledger): WatchedLedger {
  let activity = 0;
  const moved = (): void => {
    activity++;
  };
  const watched = new Proxy(ledger, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const result: unknown = Reflect.apply(value, target, args);
        if (isThenable(result)) {
          moved();
          // Both handlers, so a rejected call (its caller handles it) is not reported here as unhandled.
          result.then(moved, moved);
        }
        return result;
      };
    },
  });
  return {
    ledger: watched,
    async quiet() {
      let still = 0;
      for (let turn = 0; turn < maxTurns && still < quietTurns; turn++) {
        const before = activity;
        await nextTurn();
        still = activity === before ? still + 1 : 0;
      }
    },
  };
}
