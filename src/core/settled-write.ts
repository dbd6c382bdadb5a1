/**
 * A promise already fulfilled with `undefined` whose `then(undefined, onRejected)` (and so `catch`) returns itself
 * instead of a new promise: it can never reject, so a rejection handler has nothing to wait for. Awaiting it, and
 * `then` with a fulfilment handler, behave as on any fulfilled promise (its `constructor` is `Promise`, so `await`
 * and `Promise.resolve` take it as a native promise).
 */
class SettledWrite extends Promise<void> {
  override then<A = void, B = never>(
    onFulfilled?: ((value: void) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    if (onFulfilled === undefined || onFulfilled === null) return this as unknown as Promise<A | B>;
    return super.then(onFulfilled, onRejected);
  }
}
// `await`, `Promise.resolve` and `then`'s species take it as a native promise.
Reflect.defineProperty(SettledWrite.prototype, 'constructor', { value: Promise });

/**
 * The result of a write that is durable when the call returns (the memory ledger): one shared promise, so the
 * hot path allocates no promise per write, and callers that only watch a write for failure (`catch`, the ledger
 * health watch) allocate none either. `isSettledWrite` lets a caller skip waiting for it.
 */
export const settledWrite: Promise<void> = new SettledWrite((resolve) => resolve());

/** True for `settledWrite`: a write already durable, nothing to wait for. */
export function isSettledWrite(write: Promise<unknown>): boolean {
  return write === settledWrite;
}
