import type Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';

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
   * The run a row records a part of (a message it consumed, a turn), or the run it closes
   * (`closesRun`). A run's close is written without waiting for its parts (`Ledger.writesCommitInOrder`): when one
   * of them failed alone in the transaction that closes it, the transaction fails whole, so a run's end never
   * commits without its parts.
   */
  readonly runOf?: (row: Row) => string | null;
  readonly closesRun?: boolean;
}

/** The rows of one transaction, buffered per kind: written together before its COMMIT and before any read. */
export interface RowBatches {
  /** A kind's buffer: `add` buffers a row and the `fail` of its write (see `GroupCommit.write`). */
  define<Row>(kind: RowBatchKind<Row>): (row: Row, fail: (error: Error) => void) => void;
  /** Write every buffered row now (in the open transaction); throws when the transaction is lost with them. */
  flush(): void;
  /** Forget the buffered rows (their transaction was rolled back; the writes that buffered them run again). */
  clear(): void;
  /** A transaction began: the runs whose parts failed and the runs closed so far were another transaction's. */
  began(): void;
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
function writeAlone<Row>(
  db: Db,
  kind: RowBatchKind<Row>,
  write: readonly Entry<Row>[],
  failedAlone: (row: Row, error: Error) => void,
): void {
  const several = write.length > 1;
  if (several) db.exec('SAVEPOINT row_batch');
  try {
    for (const entry of write) kind.writeOne(entry.row);
    if (several) db.exec('RELEASE row_batch');
  } catch (error) {
    if (!db.inTransaction) throw error;
    if (several) db.exec('ROLLBACK TO row_batch; RELEASE row_batch');
    write[0]?.fail(asError(error));
    kind.failed?.();
    for (const entry of write) failedAlone(entry.row, asError(error));
  }
}

/**
 * Write `entries` with one statement per chunk; a chunk whose statement failed (and left the transaction open: a
 * refused row undoes only its statement) or missed some rows is written again one write at a time. A failure that
 * ends the transaction is thrown: the whole batch is lost with it.
 */
function writeEntries<Row>(
  db: Db,
  kind: RowBatchKind<Row>,
  entries: readonly Entry<Row>[],
  failedAlone: (row: Row, error: Error) => void,
): void {
  for (const chunk of chunksOf(byWrite(entries))) {
    const rows = chunk.flat();
    if (rows.length > 1 && rows.length <= rowsPerStatement) {
      try {
        if (kind.writeMany(rows.map((entry) => entry.row))) continue;
      } catch (error) {
        if (!db.inTransaction) throw error;
      }
    }
    for (const write of chunk) writeAlone(db, kind, write, failedAlone);
  }
}

/**
 * The runs of the open transaction whose parts failed alone, and the runs it closes: a close that meets a failed
 * part fails the transaction (see `RowBatchKind.runOf`).
 */
function createRunParts() {
  const failed = new Map<string, Error>();
  const closed = new Set<string>();
  return {
    noter<Row>(kind: RowBatchKind<Row>): (row: Row, error: Error) => void {
      const { runOf } = kind;
      if (runOf === undefined || kind.closesRun === true) return () => undefined;
      return (row, error) => {
        const run = runOf(row);
        if (run !== null && !failed.has(run)) failed.set(run, error);
      };
    },
    closing<Row>(kind: RowBatchKind<Row>, entries: readonly Entry<Row>[]): void {
      if (kind.closesRun !== true || kind.runOf === undefined) return;
      for (const entry of entries) {
        const run = kind.runOf(entry.row);
        if (run !== null) closed.add(run);
      }
    },
    /** Throws when a run closed in this transaction has a part that failed in it. */
    check(): void {
      if (failed.size === 0) return;
      for (const run of closed) {
        const error = failed.get(run);
        if (error === undefined) continue;
        throw new RuntimeError(
          'internal',
          `run "${run}" cannot end where its record failed: ${error.message}`,
          {
            cause: error,
          },
        );
      }
    },
    clear(): void {
      failed.clear();
      closed.clear();
    },
  };
}

/** Create the row buffers of one connection. */
export function createRowBatches(db: Db): RowBatches {
  const buffers: Buffer[] = [];
  // Keys with an update buffered: a later row of the same key goes in after it.
  const updating = new Set<string>();
  const runParts = createRunParts();
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
      runParts.check();
    } catch (error) {
      failure = asError(error);
      throw failure;
    }
  };
  return {
    define<Row>(kind: RowBatchKind<Row>) {
      let pending: Entry<Row>[] = [];
      const failedAlone = runParts.noter(kind);
      buffers.push({
        phase: kind.phase,
        empty: () => pending.length === 0,
        flush: () => {
          const entries = pending;
          pending = [];
          runParts.closing(kind, entries);
          writeEntries(db, kind, entries, failedAlone);
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
      runParts.clear();
      failure = undefined;
    },
    began: () => runParts.clear(),
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
