import { RuntimeError } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import { createEventWriter, type EventWriter } from '../sql/batching-event-writer.js';
import { createOrderedDeltaCoalescer } from './deltas.js';
import { gatherRows, type PostgresQuery, type PostgresWork, type RowStatement } from './queue.js';
import { eventRow, refusedEnd, type RefusedCloses } from '../sql/params.js';

/** The Postgres event log's writer (see batching-event-writer.ts). */
export type PostgresEventWriter = EventWriter;

/** What the event writer needs of the connection. */
export interface PostgresEventWriterDeps {
  readonly write: <T>(work: PostgresWork<T>) => Promise<T>;
  /** Why a write is refused now (closed), if it is. */
  readonly refusal: () => RuntimeError | undefined;
  /** The runs whose close was refused for a failed tied write: their `run.ended` is refused too. */
  readonly refusedCloses: RefusedCloses;
}

// Event-writing transactions take turns on the log's end: the `last_cursor` row of `meta`, which the transaction's
// events statement moves to its last cursor, locked until COMMIT. A transaction that waited for the row goes on with
// the version its predecessor committed (an INSERT ... ON CONFLICT DO UPDATE under READ COMMITTED takes the newest
// row), and refuses its events unless their first cursor is above that end and above every cursor the log holds (an
// end the row lags, written before it was kept, or a row missing): so the log's cursor order is its commit order
// across every process on the schema, and a reader never sees a cursor appear below one it already saw. The check
// is in the statement (`agentlanes_refuse`), so it holds where the statement is the whole transaction.
const cursorsOf = 'unnest($1::bigint[]) AS c(cursor)';
const logged = '(SELECT coalesce(max(cursor), 0) FROM events)';
const refusedBelow = (end: string): string =>
  `agentlanes_refuse('event cursor ' || (SELECT min(cursor) FROM ${cursorsOf}) || ' is not above ' || ${end} ||
    ', the log''s last')`;
const insertRowsSql = `INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[])`;
const moveEndSql = `INSERT INTO meta (key, value)
    SELECT 'last_cursor', CASE WHEN min(cursor) > ${logged} THEN max(cursor)::text ELSE ${refusedBelow(logged)} END
    FROM ${cursorsOf}
  ON CONFLICT (key) DO UPDATE SET value = CASE
    WHEN (SELECT min(cursor) FROM ${cursorsOf}) > GREATEST(meta.value::bigint, ${logged}) THEN excluded.value
    ELSE ${refusedBelow(`GREATEST(meta.value::bigint, ${logged})`)} END`;

/** Event rows, gathered from every append of a transaction into one statement (see `gatherRows`). */
const insertEventsSql: RowStatement = {
  sql: `WITH written AS (${insertRowsSql}) ${moveEndSql}`,
  parts: [insertRowsSql, moveEndSql],
  table: 'events',
};

// Renumbering takes the turn at the transaction's first append, to learn the end its events are numbered after.
const turnSql = `INSERT INTO meta (key, value) VALUES ('last_cursor', ${logged}::text)
  ON CONFLICT (key) DO UPDATE SET value = GREATEST(meta.value::bigint, excluded.value::bigint)::text
  RETURNING value::bigint AS cursor`;

/**
 * The log's end as the open transaction knows it (keyed by the transaction's query function: see `PostgresQuery`):
 * the cursor of its last append, or the end it took the turn at.
 */
const endInTransaction = new WeakMap<PostgresQuery, number>();

/**
 * Insert event rows (gathered: one array parameter per column), in cursor order after the log's end, checked by
 * the statement that writes them. With `renumber`, the events are numbered here, after the log's end, in the
 * transaction that writes them (their `cursor` replaced in place): how several processes append to one log (see
 * `fencedEvents`).
 */
export async function insertEvents(
  query: PostgresQuery,
  events: readonly RuntimeEvent[],
  refusedCloses: RefusedCloses,
  numbering: 'checked' | 'renumber' = 'checked',
): Promise<void> {
  if (events.length === 0) return;
  // The bus appends a run.ended alone: a refused one fails its own append (jobs run in call order, after the close).
  for (const event of events) {
    const refused = refusedEnd(event, refusedCloses);
    if (refused !== undefined) throw refused;
  }
  let end = endInTransaction.get(query);
  if (numbering === 'renumber') {
    end ??= Number((await query<{ cursor: number }>(turnSql)).rows[0]?.cursor ?? 0);
    const after = end;
    events.forEach((event, index) => ((event as { cursor: number }).cursor = after + index + 1));
  }
  const rows = events.map(eventRow);
  const first = rows[0]?.cursor ?? 0;
  if (end !== undefined && !(first > end)) {
    throw new RuntimeError('invalid_input', `event cursor ${first} is not above ${end}, the log's last`);
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
  endInTransaction.set(query, Math.max(end ?? 0, ...rows.map((row) => row.cursor)));
}

/** Create the event writer of one connection (deltas coalesced in cursor order: see postgres/deltas.ts). */
export function createPostgresEventWriter({
  write,
  refusal,
  refusedCloses,
}: PostgresEventWriterDeps): PostgresEventWriter {
  return createEventWriter({
    deltas: createOrderedDeltaCoalescer(),
    writeRows: (events) => write((query) => insertEvents(query, events, refusedCloses)),
    refusal,
  });
}
