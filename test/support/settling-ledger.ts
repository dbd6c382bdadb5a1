/**
 * Ledger calls still in flight, for suites that run on a ledger behind a network round trip. The fake clock lets
 * promises settle with a few event-loop turns, which covers the memory and SQLite ledgers; a Postgres write takes
 * a socket round trip instead, so a step on the fake clock is settled only once no ledger call is in flight.
 */
const inFlight = new Set<PromiseLike<unknown>>();

/** Event-loop turns that let a settled call's continuation run and issue its next ledger call, if any. */
const turnsAfterCall = 3;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function track(call: PromiseLike<unknown>): void {
  inFlight.add(call);
  const done = (): void => {
    inFlight.delete(call);
  };
  // Both handlers, so a rejected call (the caller handles it) is not reported here as unhandled.
  call.then(done, done);
}

/** `ledger` with every call that answers with a promise counted as in flight until it settles. */
export function trackLedger<Ledger extends object>(ledger: Ledger): Ledger {
  return new Proxy(ledger, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const result: unknown = Reflect.apply(value, target, args);
        if (isThenable(result)) track(result);
        return result;
      };
    },
  });
}

/**
 * Resolves once no tracked ledger call is in flight and the code awaiting the last ones has run (it may issue
 * more: those are waited for too).
 */
export async function ledgerSettled(): Promise<void> {
  for (;;) {
    for (let turn = 0; turn < turnsAfterCall; turn++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (inFlight.size === 0) return;
    await Promise.allSettled([...inFlight]);
  }
}
