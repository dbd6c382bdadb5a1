import type Database from 'better-sqlite3';

/**
 * How the SQLite ledger's stores run their work on its one connection: writes through its group commit, reads
 * after its buffered deltas went in (so a read sees every write called before it).
 */
export interface SqliteAccess {
  readonly db: Database.Database;
  readonly write: (work: () => void, statements?: 'one' | 'many') => Promise<void>;
  readonly read: <T>(work: () => T) => Promise<T>;
}
