import type Database from 'better-sqlite3';
import type { RuntimeError } from '../../core/index.js';
import { createEventWriter, type EventWriter } from '../sql/batching-event-writer.js';
import { createDeltaCoalescer } from '../sql/delta-coalescer.js';
import { eventRow } from '../sql/params.js';

/** The SQLite event log's writer (see batching-event-writer.ts). */
export type SqliteEventWriter = EventWriter;

/** What the event writer needs of the connection. */
export interface SqliteEventWriterDeps {
  readonly db: Database.Database;
  readonly write: (work: () => void, statements?: 'one' | 'many') => Promise<void>;
  /** Why a write is refused now (closed, read-only), if it is. */
  readonly refusal: () => RuntimeError | undefined;
}

/** Create the event writer of one connection, numbering on from the file's last cursor. */
export function createSqliteEventWriter({ db, write, refusal }: SqliteEventWriterDeps): SqliteEventWriter {
  const insert = db.prepare(
    `INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
     VALUES (@cursor, @session_key, @seq, @type, @run_id, @at, @body)`,
  );
  const writer = createEventWriter({
    deltas: createDeltaCoalescer(),
    // One row is one statement, atomic alone: a savepoint only for several.
    writeRows: (events) =>
      write(
        () => events.forEach((event) => insert.run(eventRow(event))),
        events.length === 1 ? 'one' : 'many',
      ),
    refusal,
  });
  const highest = db.prepare('SELECT max(cursor) AS cursor FROM events').get() as { cursor: number | null };
  writer.seed(highest.cursor ?? 0);
  return writer;
}
