import type { RuntimeEvent } from '../core/events.js';

/** Which events to read: after a global cursor, optionally for one session, at most `limit`. */
export interface EventQuery {
  readonly after?: number;
  readonly sessionKey?: string;
  readonly limit?: number;
}

/** Where the event log is kept: events in cursor order, pruned by age. */
export interface EventStore {
  /** Append events whose `cursor` and `seq` the runtime already stamped (cursors strictly increasing). */
  appendEvents(events: readonly RuntimeEvent[]): Promise<void>;
  /** Events with `cursor > after`, in cursor order. */
  readEvents(query: EventQuery): Promise<RuntimeEvent[]>;
  /** The highest cursor recorded, 0 when none. */
  lastCursor(): Promise<number>;
  /** Delete events recorded before `before` (ms); turns, runs and the inbox are kept. Resolves how many went. */
  pruneEvents(before: number): Promise<number>;
}
