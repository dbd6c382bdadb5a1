import { RuntimeError } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import { createEventWriter, type EventWriter } from '../sql/batching-event-writer.js';
import { createOrderedDeltaCoalescer } from './deltas.js';
import { gatherRows, type PostgresQuery, type PostgresWork, type RowStatement } from './queue.js';
import { eventRow } from '../sql/params.js';

/** The Postgres event log's writer (see batching-event-writer.ts). */
export type PostgresEventWriter = EventWriter;

/** What the event writer needs of the connection. */
export interface PostgresEventWriterDeps {
  readonly write: <T>(work: PostgresWork<T>) => Promise<T>;
  /** Why a write is refused now (closed), if it is. */
  readonly refusal: () => RuntimeError | undefined;
}

// Event-writing transactions take turns: the first append of a transaction locks the log's end (the `last_cursor`
// row of `meta`, held until COMMIT) and reads it in the same statement, and the transaction's INSERT moves it to its
// last cursor. The row is the lock: a transaction that waited for it reads the version its predecessor committed (an
// UPDATE under READ COMMITTED goes on with the newest row), so each checks that its first cursor is above every
// cursor committed (or pruned), the log's cursor order is its commit order across every process on the schema, and
// a reader never sees a cursor appear below one it already saw. The row is created (from the log's highest cursor)
// by the first append that finds it missing, and an end the row lags (written before it was kept) is caught up.
const turnSql = `INSERT INTO meta (key, value) VALUES ('last_cursor', (SELECT coalesce(max(cursor), 0) FROM events)::text)
  ON CONFLICT (key) DO UPDATE SET value = GREATEST(meta.value::bigint, excluded.value::bigint)::text
  RETURNING value::bigint AS cursor`;

/**
 * The log's end as the open transaction knows it, once that transaction holds the turn (keyed by the transaction's
 * query function: see `PostgresQuery`): the other appends of the same transaction skip the lock and the read.
 */
const endInTransaction = new WeakMap<PostgresQuery, number>();

/** Event rows, gathered from every append of a transaction into one statement (see `gatherRows`). */
const insertEventsSql: RowStatement = {
  sql: `WITH written AS (INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[])
      RETURNING cursor)
    UPDATE meta SET value = GREATEST(value::bigint, (SELECT max(cursor) FROM written))::text WHERE key = 'last_cursor'`,
  table: 'events',
};

/**
 * Insert event rows in one statement (one array parameter per column), in cursor order after the log's end. With
 * `renumber`, the events are numbered here, after the log's end, in the transaction that writes them (their
 * `cursor` replaced in place): how several processes append to one log (see `fencedEvents`).
 */
export async function insertEvents(
  query: PostgresQuery,
  events: readonly RuntimeEvent[],
  numbering: 'checked' | 'renumber' = 'checked',
): Promise<void> {
  const highest =
    endInTransaction.get(query) ?? Number((await query<{ cursor: number }>(turnSql)).rows[0]?.cursor ?? 0);
  if (numbering === 'renumber') {
    events.forEach((event, index) => ((event as { cursor: number }).cursor = highest + index + 1));
  }
  const rows = events.map(eventRow);
  const first = rows[0]?.cursor ?? 0;
  if (!(first > highest)) {
    throw new RuntimeError('invalid_input', `event cursor ${first} is not above ${highest}, the log's last`);
  }
  await gatherRows(query, insertEventsSql, [
    rows.map((row) => row.cursor),
    rows.map((row) => row.session_key),
    rows.map((row) => row.seq),
    rows.map((row) => row.type),
    rows.map((row) => row.run_id),
    rows.map((row) => row.at),
    rows.map((row) => row.body),
  ]);
  endInTransaction.set(query, Math.max(highest, ...rows.map((row) => row.cursor)));
}

/** Create the event writer of one connection (deltas coalesced in cursor order: see postgres/deltas.ts). */
export function createPostgresEventWriter({ write, refusal }: PostgresEventWriterDeps): PostgresEventWriter {
  return createEventWriter({
    deltas: createOrderedDeltaCoalescer(),
    writeRows: (events) => write((query) => insertEvents(query, events)),
    refusal,
  });
}
