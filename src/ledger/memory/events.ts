import { RuntimeError } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import type { EventStore } from '../contract/event-store.js';
import type { Perform } from './perform.js';

/** A session's events in cursor order, and the highest seq it ever recorded (pruning does not lower it). */
interface SessionEvents {
  list: RuntimeEvent[];
  lastSeq: number;
}

/** The event log of the memory ledger: its ledger methods, and what the rest of the ledger reads of it. */
export interface MemoryEvents {
  readonly methods: EventStore;
  /** Every event kept, in cursor order (not a copy: read only). */
  all(): readonly RuntimeEvent[];
  /** The highest seq `sessionKey` ever recorded; 0 when none. */
  lastSeqOf(sessionKey: string): number;
}

/** The index of the first item whose cursor is greater than `after` (cursors strictly increase). */
function firstAfter(events: readonly RuntimeEvent[], after: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((events[middle] as RuntimeEvent).cursor > after) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Create the event log. */
export function createMemoryEvents(perform: Perform): MemoryEvents {
  // Events are immutable once emitted, so they are stored as given (no copy): the hot path.
  let events: RuntimeEvent[] = [];
  const bySession = new Map<string, SessionEvents>();
  // The highest cursor ever appended: kept apart from `events` so pruning never lets a cursor be reused.
  let highestCursor: number | undefined;

  const methods: MemoryEvents['methods'] = {
    appendEvents: (batch) =>
      perform(() => {
        // Check the whole batch first so a bad one changes nothing.
        let previous = highestCursor ?? Number.NEGATIVE_INFINITY;
        for (const event of batch) {
          if (!(event.cursor > previous)) {
            throw new RuntimeError('invalid_input', `event cursor ${event.cursor} is not above ${previous}`);
          }
          previous = event.cursor;
        }
        for (const event of batch) {
          events.push(event);
          let stored = bySession.get(event.sessionKey);
          if (stored === undefined) bySession.set(event.sessionKey, (stored = { list: [], lastSeq: 0 }));
          stored.list.push(event);
          if (event.seq > stored.lastSeq) stored.lastSeq = event.seq;
        }
        if (batch.length > 0) highestCursor = previous;
      }),

    readEvents: (query) =>
      perform(() => {
        const source =
          query.sessionKey === undefined ? events : (bySession.get(query.sessionKey)?.list ?? []);
        const start = query.after === undefined ? 0 : firstAfter(source, query.after);
        const end = query.limit === undefined ? source.length : start + Math.max(0, query.limit);
        const page = source.slice(start, end);
        // Deltas are stored one per token here: nothing to cut, only what lies beyond `until` to leave out.
        const { until } = query;
        return until === undefined ? page : page.filter((event) => event.cursor <= until);
      }),

    lastCursor: () => perform(() => highestCursor ?? 0),

    pruneEvents: (before) =>
      perform(() => {
        // `at` comes from the clock, not the cursor, so it need not increase: filter rather than cut a prefix.
        const kept = (event: RuntimeEvent) => event.at >= before;
        const count = events.length;
        events = events.filter(kept);
        if (events.length === count) return 0;
        for (const stored of bySession.values()) stored.list = stored.list.filter(kept);
        return count - events.length;
      }),
  };
  return { methods, all: () => events, lastSeqOf: (sessionKey) => bySession.get(sessionKey)?.lastSeq ?? 0 };
}
