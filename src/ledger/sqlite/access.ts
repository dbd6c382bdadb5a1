import type Database from 'better-sqlite3';

/**
 * How the SQLite ledger's stores run their work on its one connection: writes through its group commit, reads in
 * the open transaction (so a read sees every write called before it; a read of the event log also sees the token
 * deltas still buffered, which go in first).
 */
export interface SqliteAccess {
  readonly db: Database.Database;
  readonly write: (work: () => void, statements?: 'one' | 'many') => Promise<void>;
  readonly read: <T>(work: () => T) => Promise<T>;
  /**
   * A read of the `events` table: the buffered token deltas and event rows are written first. Other reads leave them
   * buffered, so a run's deltas stay one row (a history read per run used to split them) and a transaction's event
   * rows go in together.
   */
  readonly readEventLog: <T>(work: () => T) => Promise<T>;
  /**
   * Keep what a store caches of the file in step with it: `clear` runs when a transaction is rolled back (writes it
   * saw may be gone) and when another connection changed the file (a tool, a repair: \`PRAGMA data_version\`).
   * Returns the check to run before serving a read from the cache.
   */
  readonly cacheOf: (clear: () => void) => () => void;
}
