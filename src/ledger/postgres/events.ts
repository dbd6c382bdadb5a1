import type { RuntimeEvent } from '../../core/index.js';
import { eventsWithin, pageCoverage } from '../sql/delta-rows.js';
import { packType } from '../sql/event-packs.js';
import type { EventQuery, EventStore } from '../contract/event-store.js';
import type { PostgresAccess } from './access.js';
import type { PostgresEventWriter } from './event-writer.js';
import type { PostgresQuery } from './queue.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { parseEventRows } from '../sql/event-rows.js';
import type { EventRow } from '../sql/rows.js';

// Pruning must not lower a session's seq: the highest one of what goes is kept aside.
const markSeqsSql = `INSERT INTO seq_marks (session_key, last_seq)
    SELECT session_key, max(seq) FROM events WHERE at < $1 GROUP BY session_key
  ON CONFLICT (session_key) DO UPDATE SET last_seq = GREATEST(seq_marks.last_seq, excluded.last_seq)`;
const putLastCursorSql = `INSERT INTO meta (key, value)
    VALUES ('last_cursor', GREATEST($1::bigint, (SELECT coalesce(max(cursor), 0) FROM events))::text)
  ON CONFLICT (key) DO UPDATE SET value = GREATEST(meta.value::bigint, excluded.value::bigint)::text`;
const lastCursorSql = `SELECT GREATEST(coalesce((SELECT max(cursor) FROM events), 0),
    coalesce((SELECT value::bigint FROM meta WHERE key = 'last_cursor'), 0)) AS cursor`;

/** The event rows with `cursor > after` up to `until` (inclusive), for one session or all, at most `limit`. */
async function readRows(
  sql: PostgresQuery,
  range: {
    readonly after: number;
    readonly until?: number;
    readonly limit?: number;
    readonly deltas?: boolean;
  },
  sessionKey: string | undefined,
): Promise<EventRow[]> {
  const where = [
    'cursor > $1',
    'cursor <= coalesce($2, cursor)',
    ...(range.deltas === true ? [`type IN ('assistant.delta', '${packType}')`] : []),
    ...(sessionKey === undefined ? [] : ['session_key = $4']),
  ];
  const parameters = [range.after, range.until ?? null, range.limit ?? null];
  const { rows } = await sql<EventRow>(
    `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY cursor LIMIT $3`,
    sessionKey === undefined ? parameters : [...parameters, sessionKey],
  );
  return rows;
}

/** A page of the log as `readEvents` hands it out (see delta-rows.ts for coalesced delta rows). */
async function readPage(
  sql: PostgresQuery,
  query: EventQuery,
  corruptRows: CorruptRowLog,
): Promise<RuntimeEvent[]> {
  const after = query.after ?? 0;
  const { sessionKey } = query;
  const rows = await readRows(
    sql,
    { after, ...(query.limit === undefined ? {} : { limit: query.limit }) },
    sessionKey,
  );
  const events = parseEventRows(rows, corruptRows);
  const { until, extra } = pageCoverage(
    { ...query, after },
    { rows: rows.length, last: rows.at(-1)?.cursor },
  );
  if (extra !== undefined) {
    events.push(...parseEventRows(await readRows(sql, { ...extra, deltas: true }, sessionKey), corruptRows));
  }
  return eventsWithin(events, { after, until, limit: query.limit });
}

/**
 * Create the event store on the Postgres ledger: appends go through the connection's event writer; a corrupt row
 * is read as a `ledger.corrupt` marker in its place (and reported).
 */
export function createPostgresEvents(
  { write, readEventLog }: PostgresAccess,
  writer: Pick<PostgresEventWriter, 'append' | 'lastAppended'>,
  corruptRows: CorruptRowLog,
): EventStore {
  return {
    appendEvents: (events) => writer.append(events),
    readEvents: (query) => readEventLog((sql) => readPage(sql, query, corruptRows)),
    lastCursor: () =>
      readEventLog(async (sql) => (await sql<{ cursor: number }>(lastCursorSql)).rows[0]?.cursor ?? 0),
    pruneEvents: async (before) => {
      // The buffered deltas go in first (a read of the log), so none is left behind with a pruned cursor below it.
      await readEventLog(() => Promise.resolve());
      return write(async (sql) => {
        await sql(putLastCursorSql, [writer.lastAppended()]);
        await sql(markSeqsSql, [before]);
        return (await sql('DELETE FROM events WHERE at < $1', [before])).rowCount;
      });
    },
  };
}
