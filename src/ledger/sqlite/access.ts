import type Database from 'better-sqlite3';
import type { RowBatchKind } from './row-batches.js';
import type { RefusedCloses } from '../sql/params.js';

/**
 * How the SQLite ledger's stores run their work on its one connection: writes through its group commit, reads in
 * the open transaction (so a read sees every write called before it; a read of the event log also sees the token
 * deltas still buffered, which go in first).
 */
export interface SqliteAccess {
  readonly db: Database.Database;
  readonly write: (work: () => void, statements?: 'one' | 'many') => Promise<void>;
  /**
   * A write of rows of one kind that only buffers them: they go in with the other buffered rows of their kind in one
   * statement before the COMMIT (or before a read or an unbuffered write); a row that fails then fails this write
   * alone, at the COMMIT.
   */
  readonly batched: <Row>(kind: RowBatchKind<Row>) => (rows: readonly Row[]) => Promise<void>;
  readonly read: <T>(work: () => T) => Promise<T>;
  /**
   * A read that leaves the buffered rows buffered (they would go in as more statements): for a table no batched row
   * goes to, or an answer from a cache; `flushRows` writes them first, for a read of their tables after all.
   */
  readonly readAside: <T>(work: (flushRows: () => void) => T) => Promise<T>;
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
  /** Why a write this connection handed out failed, once it did (`GroupCommit.failureOf`). */
  readonly failureOf: (write: Promise<void>) => Error | undefined;
  /** The runs whose close the open transaction refused for a failed tied write (`RefusedCloses`). */
  readonly refusedCloses: RefusedCloses;
}
