import type Database from 'better-sqlite3';
import { RuntimeError } from '../core/errors.js';
import { createGroupCommit } from './group-commit.js';
import type { SqliteAccess } from './sqlite-access.js';
import { createSqliteEventWriter, type SqliteEventWriter } from './sqlite-event-writer.js';
import type { SqliteLedgerOptions } from './sqlite-ledger.js';
import type { WriterLock } from './sqlite-lock.js';
import { openDatabase } from './sqlite-open.js';

/** The SQLite ledger's one connection: how its stores read and write, its event write path, and its close. */
export interface SqliteConnection extends SqliteAccess {
  readonly events: SqliteEventWriter;
  /** Write what is buffered, commit, checkpoint, close the file and release the writer lock; twice is harmless. */
  close(): Promise<void>;
}

/** Checkpoint (a writer of a file), close the file and release the lock, each even when the one before failed. */
function closeFile(db: Database.Database, lock: WriterLock | undefined, options: SqliteLedgerOptions): void {
  try {
    if (options.readonly !== true && options.path !== ':memory:') db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    try {
      db.close();
    } finally {
      lock?.release();
    }
  }
}

/**
 * Open the connection. Writes are group-committed (one transaction per event-loop turn); a read runs in the open
 * transaction, so it sees every write called before it without an fsync (a read of the event log once the
 * buffered deltas went in).
 */
export function openSqliteConnection(options: SqliteLedgerOptions): SqliteConnection {
  const { db, lock } = openDatabase(options);
  const commits = createGroupCommit(db, (flush) => setImmediate(flush));
  let closed = false;
  const refusal = (): RuntimeError | undefined =>
    closed
      ? new RuntimeError('runtime_closed', 'the ledger is closed')
      : options.readonly === true
        ? new RuntimeError('invalid_input', `${options.path} is open read-only`)
        : undefined;
  const write = (work: () => void, statements: 'one' | 'many' = 'many'): Promise<void> => {
    const refused = refusal();
    return refused === undefined ? commits.write(work, statements) : Promise.reject(refused);
  };
  const events = createSqliteEventWriter({ db, write, refusal });
  const read = <T>(work: () => T, deltas?: 'deltas'): Promise<T> => {
    if (closed) return Promise.reject(new RuntimeError('runtime_closed', 'the ledger is closed'));
    try {
      if (deltas !== undefined) void events.flush().catch(() => undefined);
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    events.stop();
    const last = events.flush();
    commits.commit();
    // A failed last write, checkpoint or close still closes the file and releases the writer lock.
    try {
      await last;
    } finally {
      closed = true;
      closeFile(db, lock, options);
    }
  };
  const readEventLog = <T>(work: () => T): Promise<T> => read(work, 'deltas');
  return { db, write, read: (work) => read(work), readEventLog, events, close };
}
