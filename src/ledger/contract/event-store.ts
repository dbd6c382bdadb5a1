import type { RuntimeEvent } from '../../core/index.js';

/** Which events to read: after a global cursor, optionally for one session, at most `limit` of them. */
export interface EventQuery {
  readonly after?: number;
  readonly sessionKey?: string;
  /**
   * How many events to hand out at most. A SQL ledger reads at most this many rows: a row of coalesced token deltas
   * or a pack of events may stand for several events, so a page may stop inside a row (the next read, after the
   * last cursor handed out, goes on from there).
   */
  readonly limit?: number;
  /** Hand out nothing with a cursor above this one (the text of a coalesced delta row up to it). */
  readonly until?: number;
}

/** Where the event log is kept: events in cursor order, pruned by age. */
export interface EventStore {
  /** Append events whose `cursor` and `seq` the runtime already stamped (cursors strictly increasing). */
  appendEvents(events: readonly RuntimeEvent[]): Promise<void>;
  /**
   * Events with `cursor > after` (and `<= until`), in cursor order, each token delta's text exactly once: a read
   * that starts or stops inside a coalesced delta row gets only the text of the tokens past `after` (up to `until`).
   */
  readEvents(query: EventQuery): Promise<RuntimeEvent[]>;
  /** The highest cursor recorded, 0 when none. */
  lastCursor(): Promise<number>;
  /** Delete events recorded before `before` (ms); turns, runs and the inbox are kept. Resolves how many went. */
  pruneEvents(before: number): Promise<number>;
}
