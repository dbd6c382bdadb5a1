import { RuntimeError } from '../core/index.js';
import type { Ledger, SessionLoad, SessionState } from '../ledger/index.js';

/** A hydration waiting for its session's state. */
interface Waiting {
  readonly resolve: (state: SessionState) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The most sessions one batch reads. Hydrating is all synchronous work chained on promises, which starves the
 * event loop: 10,000 sessions read in one batch were admitted in one stretch and acknowledged together at its end
 * (the group commit runs between turns). Batches of this size let each one's admissions commit and acknowledge
 * before the next batch is read; 512 is the group commit's own batch limit.
 */
const maxBatchKeys = 512;

/** Reads a session's state, gathering the reads asked for in one stretch into one `loadSessions` call. */
export type SessionLoader = (sessionKey: string) => Promise<SessionState>;

/**
 * Create a loader over `ledger`. The keys asked for before the next microtask are read together: when many sessions
 * hydrate at once (a restart, a burst of first messages) the ledger reads each table once for all of them instead of
 * once per session and table; beyond `maxBatchKeys`, the next keys are read in the next event-loop turn. A session whose row is corrupt fails alone (its `ledger_corrupt`); a failure of the
 * whole read fails every session waiting for it. A ledger without `loadSessions` is read one key at a time.
 */
export function createSessionLoader(ledger: Ledger): SessionLoader {
  if (ledger.loadSessions === undefined) return (sessionKey) => ledger.loadSession(sessionKey);
  const loadSessions = ledger.loadSessions.bind(ledger);
  const waiting = new Map<string, Waiting[]>();
  const settle = (loads: readonly SessionLoad[], batch: Map<string, Waiting[]>): void => {
    const byKey = new Map(loads.map((load) => [load.sessionKey, load]));
    for (const [sessionKey, waiters] of batch) {
      const load = byKey.get(sessionKey);
      for (const waiter of waiters) {
        if (load === undefined)
          waiter.reject(
            new RuntimeError('internal', `the ledger returned no state for session "${sessionKey}"`),
          );
        else if ('error' in load) waiter.reject(load.error);
        else waiter.resolve(load.state);
      }
    }
  };
  const fail = (batch: Map<string, Waiting[]>, error: unknown): void => {
    for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
  };
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const batch = new Map<string, Waiting[]>();
    for (const [key, waiters] of waiting) {
      if (batch.size === maxBatchKeys) break;
      batch.set(key, waiters);
    }
    const keys = [...batch.keys()];
    for (const key of keys) waiting.delete(key);
    // The rest waits for the next event-loop turn: this batch's admissions commit and acknowledge first.
    if (waiting.size > 0) {
      scheduled = true;
      setImmediate(flush);
    }
    try {
      loadSessions(keys).then(
        (loads) => settle(loads, batch),
        (error: unknown) => fail(batch, error),
      );
    } catch (error) {
      fail(batch, error);
    }
  };
  return (sessionKey) =>
    new Promise<SessionState>((resolve, reject) => {
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(flush);
      }
      const waiters = waiting.get(sessionKey);
      if (waiters === undefined) waiting.set(sessionKey, [{ resolve, reject }]);
      else waiters.push({ resolve, reject });
    });
}

/** One loader per ledger, so that every hydration reading the ledger joins the same batch. */
const loaders = new WeakMap<Ledger, SessionLoader>();

/** The state of `sessionKey`, read in the batch of the hydrations asked for in the same stretch (see above). */
export function loadSessionState(ledger: Ledger, sessionKey: string): Promise<SessionState> {
  let loader = loaders.get(ledger);
  if (loader === undefined) {
    loader = createSessionLoader(ledger);
    loaders.set(ledger, loader);
  }
  return loader(sessionKey);
}
