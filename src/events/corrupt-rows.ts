import { isRuntimeError, type RuntimeError } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { EventBus, SeqHolder } from './event-bus.js';

/**
 * Report what failed in the background. A corrupt ledger row (`ledger_corrupt` whose details name table and row)
 * is reported once however often it is met: through `onError`, and as a `ledger.corrupt` event on the session it
 * belongs to (not for an event row: the replay already shows a `ledger.corrupt` marker in its place). Other
 * errors go to `onError` as they come.
 */
export function createCorruptRowReporter(deps: {
  ledger: Ledger;
  bus: EventBus;
  /** The live session of a key, whose seq the event must continue. */
  live: (sessionKey: string) => SeqHolder | undefined;
  onError: (error: unknown) => void;
}): (error: unknown) => void {
  const { ledger, bus, live, onError } = deps;
  const reported = new Set<string>();
  // Reports of sessions that are not live take their seq from the ledger, one after another.
  let chain: Promise<void> = Promise.resolve();

  function announce(error: RuntimeError, table: string, row: string, sessionKey: string): void {
    const event = { type: 'ledger.corrupt', table, row, message: error.message } as const;
    const holder = live(sessionKey);
    if (holder !== undefined) {
      bus.emit(holder, event);
      return;
    }
    const lastSeq = ledger.lastSeq?.bind(ledger);
    if (lastSeq === undefined) return;
    chain = chain
      .then(() => bus.ready)
      .then(() => lastSeq(sessionKey))
      .then((seq) => {
        bus.emit(live(sessionKey) ?? { key: sessionKey, lastSeq: seq }, event);
      })
      .catch(onError);
  }

  return (error) => {
    const details = isRuntimeError(error, 'ledger_corrupt') ? error.details : undefined;
    const table = details?.table;
    const row = details?.row;
    if (typeof table !== 'string' || typeof row !== 'string') {
      onError(error);
      return;
    }
    const name = `${table}\u0000${row}`;
    if (reported.has(name)) return;
    reported.add(name);
    onError(error);
    const sessionKey = details?.sessionKey;
    if (typeof sessionKey === 'string' && table !== 'events') {
      announce(error as RuntimeError, table, row, sessionKey);
    }
  };
}
