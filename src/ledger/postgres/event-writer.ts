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

// Event-writing transactions take turns (a transaction lock, held until COMMIT), and each checks that its first
// cursor is above every cursor committed (or pruned): so the log's cursor order is its commit order across every
// process on the schema, and a reader never sees a cursor appear below one it already saw.
const turnSql = "SELECT pg_advisory_xact_lock(hashtext('agentlanes:events:' || current_schema()))";
const highestSql = `SELECT GREATEST(coalesce((SELECT max(cursor) FROM events), 0),
    coalesce((SELECT value::bigint FROM meta WHERE key = 'last_cursor'), 0)) AS cursor`;

/**
 * The log's end as the open transaction knows it, once that transaction holds the turn (keyed by the transaction's
 * query function: see `PostgresQuery`): the other appends of the same transaction skip the lock and the read.
 */
const endInTransaction = new WeakMap<PostgresQuery, number>();

/** Event rows, gathered from every append of a transaction into one statement (see `gatherRows`). */
const insertEventsSql: RowStatement = {
  sql: `INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[])`,
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
  let highest = endInTransaction.get(query);
  if (highest === undefined) {
    await query(turnSql);
    highest = Number((await query<{ cursor: number }>(highestSql)).rows[0]?.cursor ?? 0);
  }
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
