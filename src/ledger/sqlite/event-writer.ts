import type Database from 'better-sqlite3';
import type { RuntimeError, RuntimeEvent } from '../../core/index.js';
import { createEventWriter, type EventWriter } from '../sql/batching-event-writer.js';
import { createDeltaCoalescer } from '../sql/delta-coalescer.js';
import { eventRows, type EventRowParams } from '../sql/event-packs.js';
import { shortenBody } from '../sql/body-pieces.js';
import { refusedEnd, type RefusedCloses } from '../sql/params.js';

/** The SQLite event log's writer (see batching-event-writer.ts). */
export type SqliteEventWriter = EventWriter;

/** What the event writer needs of the connection. */
export interface SqliteEventWriterDeps {
  readonly db: Database.Database;
  readonly write: (
    work: (fail: (error: Error) => void) => void,
    statements?: 'one' | 'many',
  ) => Promise<void>;
  /** Why a write is refused now (closed, read-only), if it is. */
  readonly refusal: () => RuntimeError | undefined;
}

/** Rows per multi-row INSERT. */
const rowsPerStatement = 32;
const columns = ['cursor', 'session_key', 'seq', 'type', 'run_id', 'at', 'body'] as const;

/**
 * The event rows of the open transaction, written together: an append only buffers its events (its promise still
 * settles with the transaction's COMMIT), and `flush` inserts them, each session's packed (event-packs.ts), with one
 * statement per 32 rows, just before the COMMIT and before any read of the file (so a read sees them), and their
 * cursor and time ranges as one `event_times` row (what retention prunes by). Eight events per message were eight
 * INSERTs.
 */
export interface EventRowBuffer {
  /** Buffer an append's events; `fail` fails that append alone (a `run.ended` refused with its close). */
  add(events: readonly RuntimeEvent[], fail: (error: Error) => void): void;
  /** Insert the buffered rows now (in the open transaction). */
  flush(): void;
  /** Forget the buffered rows (their transaction was rolled back; the writes that buffered them run again). */
  clear(): void;
}

/** The rows of `events` as this ledger stores them: packed (event-packs.ts), their bodies shortened (body-pieces.ts). */
export function storedRows(events: readonly RuntimeEvent[]): EventRowParams[] {
  return storedForm(eventRows(events));
}

/** `rows` with their bodies shortened (body-pieces.ts). */
export function storedForm(rows: readonly EventRowParams[]): EventRowParams[] {
  return rows.map((row) => ({ ...row, body: shortenBody(row.body) }));
}

/** The cursor and time ranges of rows about to be inserted (the `event_times` row retention prunes by). */
function timesOf(
  rows: readonly (readonly unknown[])[],
): { first: number; last: number; minAt: number; maxAt: number } | undefined {
  const cursorAt = columns.indexOf('cursor');
  const atAt = columns.indexOf('at');
  let times: { first: number; last: number; minAt: number; maxAt: number } | undefined;
  for (const row of rows) {
    const cursor = row[cursorAt] as number;
    const at = row[atAt] as number;
    if (times === undefined) times = { first: cursor, last: cursor, minAt: at, maxAt: at };
    else {
      times.first = Math.min(times.first, cursor);
      times.last = Math.max(times.last, cursor);
      times.minAt = Math.min(times.minAt, at);
      times.maxAt = Math.max(times.maxAt, at);
    }
  }
  return times;
}

/** Create the buffer of one connection's event rows. */
export function createEventRowBuffer(db: Database.Database, refusedCloses: RefusedCloses): EventRowBuffer {
  const statements = new Map<number, Database.Statement>();
  const statementFor = (rows: number): Database.Statement => {
    let statement = statements.get(rows);
    if (statement === undefined) {
      const values = Array.from({ length: rows }, () => `(${columns.map(() => '?').join(', ')})`);
      statement = db.prepare(`INSERT INTO events (${columns.join(', ')}) VALUES ${values.join(', ')}`);
      statements.set(rows, statement);
    }
    return statement;
  };
  const markTimes = db.prepare(
    'INSERT INTO event_times (last_cursor, first_cursor, min_at, max_at) VALUES (?, ?, ?, ?)',
  );
  let pending: RuntimeEvent[] = [];
  // The appends of a run.ended: refused, unwritten, when its run's close was (the close rows go in first).
  const ends = new Map<RuntimeEvent, (error: Error) => void>();
  // A flush that failed before a read: the batch's COMMIT must fail with it, or its writers would be told their
  // rows are durable.
  let failure: Error | undefined;
  const written = (event: RuntimeEvent): boolean => {
    const refused = refusedEnd(event, refusedCloses);
    if (refused !== undefined) ends.get(event)?.(refused);
    return refused === undefined;
  };
  return {
    add(events, fail) {
      for (const event of events) {
        pending.push(event);
        if (event.type === 'run.ended') ends.set(event, fail);
      }
    },
    flush() {
      if (failure !== undefined) throw failure;
      const kept = refusedCloses.size === 0 ? pending : pending.filter(written);
      const rows = storedRows(kept).map((row) => columns.map((column) => row[column]));
      pending = [];
      ends.clear();
      try {
        for (let start = 0; start < rows.length; start += rowsPerStatement) {
          const chunk = rows.slice(start, start + rowsPerStatement);
          statementFor(chunk.length).run(chunk.flat());
        }
        const times = timesOf(rows);
        if (times !== undefined) markTimes.run(times.last, times.first, times.minAt, times.maxAt);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        throw failure;
      }
    },
    clear() {
      pending = [];
      ends.clear();
      failure = undefined;
    },
  };
}

/** Create the event writer of one connection, numbering on from the file's last cursor. */
export function createSqliteEventWriter(
  { db, write, refusal }: SqliteEventWriterDeps,
  rows: EventRowBuffer,
): SqliteEventWriter {
  const writer = createEventWriter({
    deltas: createDeltaCoalescer(),
    // Buffering cannot fail: the rows go in (and may fail) with the transaction's COMMIT.
    writeRows: (events) => write((fail) => rows.add(events, fail), 'one'),
    refusal,
  });
  const highest = db.prepare('SELECT max(cursor) AS cursor FROM events').get() as { cursor: number | null };
  writer.seed(highest.cursor ?? 0);
  return writer;
}
