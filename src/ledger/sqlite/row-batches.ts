import type Database from 'better-sqlite3';
import { isFileFailure } from './file.js';

/**
 * One kind of row write that goes in batches: the rows a transaction buffered are written with one statement per
 * `rowsPerStatement`, and written again one at a time when that statement failed or did not reach every row, so
 * that a bad row fails only its own write.
 */
export interface RowBatchKind<Row> {
  /** Inserts go in before updates (an update of a row inserted in the same transaction must find it). */
  readonly phase: 'insert' | 'update';
  /**
   * The row's key, shared by the kinds that write the same records (a message's insert and its updates): a row
   * whose key has an update pending is written after it, as the writes were called (the buffer is flushed first).
   */
  readonly key?: (row: Row) => string;
  /** Write `rows` with one statement; false when some of them took no effect (each is then written alone). */
  readonly writeMany: (rows: readonly Row[]) => boolean;
  /** Write one row alone; throws what that write throws (a coded error for a row that is refused). */
  readonly writeOne: (row: Row) => void;
  /** Called as a row is buffered (again, when its write runs again after a rollback). */
  readonly buffered?: (row: Row) => void;
  /** Called when a row failed alone (what a store learned of it on buffering is wrong). */
  readonly failed?: () => void;
  /**
   * Why a buffered row must not be written after all, checked as it is written: a write it was called after failed
   * (a run's close after its turns, `RunCloseOptions.after`). Its write then fails alone with that error.
   */
  readonly blockedBy?: (row: Row) => Error | undefined;
}

/** The rows of one transaction, buffered per kind: written together before its COMMIT and before any read. */
export interface RowBatches {
  /** A kind's buffer: `add` buffers a row and the `fail` of its write (see `GroupCommit.write`). */
  define<Row>(kind: RowBatchKind<Row>): (row: Row, fail: (error: Error) => void) => void;
  /** Write every buffered row now (in the open transaction); throws when the transaction is lost with them. */
  flush(): void;
  /** Forget the buffered rows (their transaction was rolled back; the writes that buffered them run again). */
  clear(): void;
}

/** Rows per multi-row statement: at most 16 columns each, well under SQLite's 32,766 parameters. */
export const rowsPerStatement = 64;

interface Entry<Row> {
  readonly row: Row;
  readonly fail: (error: Error) => void;
}

interface Buffer {
  readonly phase: 'insert' | 'update';
  readonly empty: () => boolean;
  readonly flush: () => void;
  readonly clear: () => void;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** `entries` cut into the writes that buffered them (a write's rows are buffered one after the other). */
function byWrite<Row>(entries: readonly Entry<Row>[]): Entry<Row>[][] {
  const writes: Entry<Row>[][] = [];
  for (const entry of entries) {
    const last = writes[writes.length - 1];
    if (last?.[0]?.fail === entry.fail) last.push(entry);
    else writes.push([entry]);
  }
  return writes;
}

/** Whole writes packed into chunks of at most `rowsPerStatement` rows (a bigger write is a chunk of its own). */
function chunksOf<Row>(writes: readonly Entry<Row>[][]): Entry<Row>[][][] {
  const chunks: Entry<Row>[][][] = [];
  let rows = rowsPerStatement;
  for (const write of writes) {
    if (rows + write.length > rowsPerStatement) {
      chunks.push([]);
      rows = 0;
    }
    chunks[chunks.length - 1]?.push(write);
    rows += write.length;
  }
  return chunks;
}

type Db = Pick<Database.Database, 'inTransaction' | 'exec'>;

/**
 * Write one write's rows alone. A write of several rows is all or nothing: only here, once a batch failed, do they
 * go in under a savepoint, rolled back when one of them is refused. A failure that ends the transaction is thrown.
 */
function writeAlone<Row>(db: Db, kind: RowBatchKind<Row>, write: readonly Entry<Row>[]): void {
  const several = write.length > 1;
  if (several) db.exec('SAVEPOINT row_batch');
  try {
    for (const entry of write) kind.writeOne(entry.row);
    if (several) db.exec('RELEASE row_batch');
  } catch (error) {
    // A storage fault is not the row's: it fails the transaction, so that what was written with the row (a run's
    // close with its turns) never commits without it.
    if (!db.inTransaction || isStorageError(error)) throw error;
    if (several) db.exec('ROLLBACK TO row_batch; RELEASE row_batch');
    write[0]?.fail(asError(error));
    kind.failed?.();
  }
}

/**
 * Write `entries` with one statement per chunk; a chunk whose statement failed (and left the transaction open: a
 * refused row undoes only its statement) or missed some rows is written again one write at a time. A failure that
 * ends the transaction is thrown: the whole batch is lost with it.
 */
function writeEntries<Row>(db: Db, kind: RowBatchKind<Row>, entries: readonly Entry<Row>[]): void {
  for (const chunk of chunksOf(byWrite(unblocked(kind, entries)))) {
    const rows = chunk.flat();
    if (rows.length > 1 && rows.length <= rowsPerStatement) {
      try {
        if (kind.writeMany(rows.map((entry) => entry.row))) continue;
      } catch (error) {
        if (!db.inTransaction) throw error;
      }
    }
    for (const write of chunk) writeAlone(db, kind, write);
  }
}

/** `entries` but those `kind.blockedBy` stops: each of those fails its write alone, unwritten. */
function unblocked<Row>(kind: RowBatchKind<Row>, entries: readonly Entry<Row>[]): readonly Entry<Row>[] {
  const { blockedBy } = kind;
  if (blockedBy === undefined) return entries;
  return entries.filter((entry) => {
    const blocked = blockedBy(entry.row);
    if (blocked !== undefined) entry.fail(blocked);
    return blocked === undefined;
  });
}

/** Whether `error` is SQLite's own of a storage fault: the file, not a row, failed (full, I/O, damaged, locked). */
function isStorageError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (isFileFailure(code) || code.startsWith('SQLITE_CORRUPT'));
}

/** Create the row buffers of one connection. */
export function createRowBatches(db: Db): RowBatches {
  const buffers: Buffer[] = [];
  // Keys with an update buffered: a later row of the same key goes in after it.
  const updating = new Set<string>();
  // A flush that failed before a read or a write: the batch's COMMIT must fail with it.
  let failure: Error | undefined;
  const flush = (): void => {
    if (failure !== undefined) throw failure;
    if (buffers.every((buffer) => buffer.empty())) return;
    updating.clear();
    try {
      for (const phase of ['insert', 'update'] as const) {
        for (const buffer of buffers) if (buffer.phase === phase) buffer.flush();
      }
    } catch (error) {
      failure = asError(error);
      throw failure;
    }
  };
  return {
    define<Row>(kind: RowBatchKind<Row>) {
      let pending: Entry<Row>[] = [];
      buffers.push({
        phase: kind.phase,
        empty: () => pending.length === 0,
        flush: () => {
          const entries = pending;
          pending = [];
          writeEntries(db, kind, entries);
        },
        clear: () => (pending = []),
      });
      return (row: Row, fail: (error: Error) => void) => {
        const key = kind.key?.(row);
        if (key !== undefined && updating.has(key)) flush();
        if (key !== undefined && kind.phase === 'update') updating.add(key);
        pending.push({ row, fail });
        kind.buffered?.(row);
      };
    },
    flush,
    clear: () => {
      for (const buffer of buffers) buffer.clear();
      updating.clear();
      failure = undefined;
    },
  };
}

/**
 * A statement per number of rows (prepared once each): `sql(rows)` is its text for that many rows.
 */
export function statementsByRows(
  db: Pick<Database.Database, 'prepare'>,
  sql: (rows: number) => string,
): (rows: number) => Database.Statement {
  const statements = new Map<number, Database.Statement>();
  return (rows) => {
    let statement = statements.get(rows);
    if (statement === undefined) {
      statement = db.prepare(sql(rows));
      statements.set(rows, statement);
    }
    return statement;
  };
}

/** `(?, ?, …), (?, ?, …)`: `rows` tuples of `columns` parameters. */
export function valueTuples(rows: number, columns: number): string {
  const tuple = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => tuple).join(', ');
}
