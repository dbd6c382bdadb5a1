import { isRuntimeError, RuntimeError } from '../../core/index.js';
import { createGroupCommit, type GroupCommit } from './group-commit.js';
import type { SqliteAccess } from './access.js';
import {
  createEventRowBuffer,
  createSqliteEventWriter,
  type EventRowBuffer,
  type SqliteEventWriter,
} from './event-writer.js';
import type { SqliteLedgerOptions } from './ledger.js';
import { openDatabase } from './open.js';
import { createRowBatches } from './row-batches.js';
import { isFileFailure } from './file.js';
import type { RefusedCloses } from '../sql/params.js';

/** The SQLite ledger's one connection: how its stores read and write, its event write path, and its close. */
export interface SqliteConnection extends SqliteAccess {
  readonly events: SqliteEventWriter;
  /** See `GroupCommit.unfailed`. */
  readonly unfailed: (writes: readonly Promise<void>[]) => boolean;
  /** Write what is buffered, commit, checkpoint, close the file and release the writer lock; twice is harmless. */
  close(): Promise<void>;
}

/**
 * What a failed write, commit, checkpoint or close of the ledger file is for its callers: a RuntimeError passes
 * through; a full disk, an I/O error or a read-only file is `ledger_unavailable` naming the path (the SqliteError as
 * `cause`), a damaged file `ledger_corrupt`; other errors (a bug, a constraint) pass through.
 */
export function translateFileError(error: unknown, path: string): Error {
  if (isRuntimeError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const said = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && code.startsWith('SQLITE_CORRUPT')) {
    return new RuntimeError('ledger_corrupt', `the ledger ${path} is damaged (${said})`, {
      cause: error,
      details: { path },
    });
  }
  if (typeof code === 'string' && isFileFailure(code)) {
    return new RuntimeError('ledger_unavailable', `the ledger ${path} cannot be written: ${said}`, {
      cause: error,
      details: { path },
    });
  }
  return error instanceof Error ? error : new Error(said);
}

/**
 * Run every step of closing, each even when the ones before failed (so the file handles and the writer lock are
 * always released), and throw the first failure, coded (`translateFileError`).
 */
async function runAll(steps: readonly (() => unknown)[], path: string): Promise<void> {
  let failure: unknown;
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure === undefined) return;
  const coded = translateFileError(failure, path);
  throw isRuntimeError(coded)
    ? coded
    : new RuntimeError('ledger_unavailable', `closing the ledger ${path} failed: ${coded.message}`, {
        cause: failure,
        details: { path },
      });
}

/**
 * Close a connection: flush the events, commit, checkpoint, close the file and release the lock. Each step runs even
 * when one before failed: a full disk or a read-only mount never keeps the file open or the writer lock held (a
 * reopen in this process would be `ledger_locked`).
 */
function closeInSteps(
  db: SqliteConnection['db'],
  lock: ReturnType<typeof openDatabase>['lock'],
  commits: GroupCommit,
  events: ReturnType<typeof createSqliteEventWriter>,
  options: SqliteLedgerOptions,
  markClosed: () => void,
): Promise<void> {
  events.stop();
  const last = events.flush();
  const checkpoint = options.readonly !== true && options.path !== ':memory:';
  return runAll(
    [
      () => commits.commit(),
      () => last,
      markClosed,
      () => (checkpoint ? db.pragma('wal_checkpoint(TRUNCATE)') : undefined),
      () => db.close(),
      () => lock?.release(),
    ],
    options.path,
  );
}

/**
 * Caches of the file's rows are cleared when a transaction is rolled back, and when another connection wrote the
 * file since the last look (\`PRAGMA data_version\` moves only for other connections' commits). The look is taken
 * only when a cache is about to answer, and once per transaction at most: no other connection can commit while this
 * one holds its write transaction (BEGIN IMMEDIATE), so one look holds until it ends.
 */
function watchForeignWrites(db: SqliteConnection['db'], commits: GroupCommit): SqliteConnection['cacheOf'] {
  const version = db.prepare('PRAGMA data_version').pluck();
  let seen = version.get();
  let lookedInTransaction = false;
  const caches: (() => void)[] = [];
  const clearAll = (): void => caches.forEach((clear) => clear());
  commits.onRollback(clearAll);
  commits.onBegin(() => (lookedInTransaction = false));
  const check = (): void => {
    if (commits.open && lookedInTransaction) return;
    const now = version.get();
    if (now !== seen) clearAll();
    seen = now;
    lookedInTransaction = commits.open;
  };
  return (clear) => {
    caches.push(clear);
    return check;
  };
}

/**
 * How writes reach the group commit: refused once closed or read-only, a file failure coded. Row statements a
 * transaction buffered (`buffered` writes) go in before its COMMIT, and before any read or unbuffered write (which
 * may read or change their rows), in one statement per table.
 */
function createWritePath(
  db: SqliteConnection['db'],
  commits: GroupCommit,
  refusal: () => RuntimeError | undefined,
  path: string,
) {
  const batches = createRowBatches(db);
  const flushRows = (): void => {
    if (commits.open) batches.flush();
  };
  const submit = (
    work: Parameters<GroupCommit['write']>[0],
    statements: 'one' | 'many',
    buffered: boolean,
  ): Promise<void> => {
    const refused = refusal();
    if (refused !== undefined) return Promise.reject(refused);
    // An unbuffered write flushes the buffered rows in its own work: again when it runs again after a rollback.
    const run: typeof work = buffered
      ? work
      : () => {
          flushRows();
          work(() => undefined);
        };
    try {
      // The group commit's own promise (its failure coded there): `unfailed` and `failureOf` know it.
      return commits.write(run, statements);
    } catch (error) {
      // BEGIN itself failed (the file cannot take a write): a rejection like any other failed write.
      return Promise.reject(translateFileError(error, path));
    }
  };
  const batched: SqliteAccess['batched'] = (kind) => {
    const add = batches.define(kind);
    return (rows) => submit((fail) => rows.forEach((row) => add(row, fail)), 'one', true);
  };
  return { submit, batches, batched, flushRows };
}

/**
 * The event rows of the open transaction, written before its COMMIT after the hooks registered before, and the runs
 * whose close it refused (`RefusedCloses`: forgotten as each transaction begins).
 */
function bufferEventRows(
  db: SqliteConnection['db'],
  commits: GroupCommit,
): { rows: EventRowBuffer; refusedCloses: RefusedCloses } {
  const refusedCloses: RefusedCloses = new Set();
  const rows = createEventRowBuffer(db, refusedCloses);
  commits.beforeCommit(() => rows.flush());
  commits.onRollback(() => rows.clear());
  commits.onBegin(() => refusedCloses.clear());
  return { rows, refusedCloses };
}

/**
 * Open the connection. Writes are group-committed (one transaction per event-loop turn); a read runs in the open
 * transaction, so it sees every write called before it without an fsync (a read of the event log once the
 * buffered deltas went in).
 */
export function openSqliteConnection(options: SqliteLedgerOptions): SqliteConnection {
  const { db, lock } = openDatabase(options);
  const coded = (error: unknown): Error => translateFileError(error, options.path);
  const commits = createGroupCommit(db, (flush) => setImmediate(flush), undefined, coded);
  let closed = false;
  const refusal = (): RuntimeError | undefined =>
    closed
      ? new RuntimeError('runtime_closed', 'the ledger is closed')
      : options.readonly === true
        ? new RuntimeError('invalid_input', `${options.path} is open read-only`)
        : undefined;
  const { submit, batches, batched, flushRows } = createWritePath(db, commits, refusal, options.path);
  const write = (work: () => void, statements: 'one' | 'many' = 'many'): Promise<void> =>
    submit(work, statements, false);
  commits.beforeCommit(() => batches.flush());
  commits.onRollback(() => batches.clear());
  // After the row batches' hooks: a transaction's event rows go in after its rows (a run.ended after its close).
  const { rows, refusedCloses } = bufferEventRows(db, commits);
  // Event rows are buffered too (their own buffer): appending them leaves the other buffered rows buffered.
  const events = createSqliteEventWriter({ db, write: (work) => submit(work, 'one', true), refusal }, rows);
  const cacheOf = watchForeignWrites(db, commits);
  const read = <T>(work: () => T, from: 'rows' | 'aside' | 'deltas'): Promise<T> => {
    if (closed) return Promise.reject(new RuntimeError('runtime_closed', 'the ledger is closed'));
    try {
      if (from !== 'aside') flushRows();
      // Only the event log's readers read the events table: the rows and deltas still buffered go in first.
      if (from === 'deltas') void events.flush().catch(() => undefined);
      if (from === 'deltas' && commits.open) rows.flush();
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  let closing: Promise<void> | undefined;
  const finish = (): Promise<void> =>
    closeInSteps(db, lock, commits, events, options, () => {
      closed = true;
    });
  // Twice is harmless: a second close waits for the first and resolves, whatever the first one met.
  const close = (): Promise<void> => {
    if (closing !== undefined) return closing.catch(() => undefined);
    closing = finish();
    return closing;
  };
  const readEventLog = <T>(work: () => T): Promise<T> => read(work, 'deltas');
  return {
    db,
    write,
    batched,
    read: (work) => read(work, 'rows'),
    readAside: (work) => read(() => work(flushRows), 'aside'),
    readEventLog,
    cacheOf,
    events,
    unfailed: commits.unfailed,
    failureOf: commits.failureOf,
    refusedCloses,
    close,
  };
}
