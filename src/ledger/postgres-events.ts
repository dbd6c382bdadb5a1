import type { EventStore } from './event-store.js';
import type { PostgresAccess } from './postgres-access.js';
import type { PostgresEventWriter } from './postgres-event-writer.js';
import type { CorruptRowLog } from './sqlite-corrupt-rows.js';
import { readEventRow } from './sqlite-event-rows.js';
import type { EventRow } from './sqlite-rows.js';

// Pruning must not lower a session's seq: the highest one of what goes is kept aside.
const markSeqsSql = `INSERT INTO seq_marks (session_key, last_seq)
    SELECT session_key, max(seq) FROM events WHERE at < $1 GROUP BY session_key
  ON CONFLICT (session_key) DO UPDATE SET last_seq = GREATEST(seq_marks.last_seq, excluded.last_seq)`;
const putLastCursorSql = `INSERT INTO meta (key, value)
    VALUES ('last_cursor', GREATEST($1::bigint, (SELECT coalesce(max(cursor), 0) FROM events))::text)
  ON CONFLICT (key) DO UPDATE SET value = GREATEST(meta.value::bigint, excluded.value::bigint)::text`;
const lastCursorSql = `SELECT GREATEST(coalesce((SELECT max(cursor) FROM events), 0),
    coalesce((SELECT value::bigint FROM meta WHERE key = 'last_cursor'), 0)) AS cursor`;

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
    readEvents: (query) =>
      readEventLog(async (sql) => {
        const after = query.after ?? 0;
        const limit = query.limit ?? null;
        const { rows } =
          query.sessionKey === undefined
            ? await sql<EventRow>('SELECT * FROM events WHERE cursor > $1 ORDER BY cursor LIMIT $2', [
                after,
                limit,
              ])
            : await sql<EventRow>(
                'SELECT * FROM events WHERE session_key = $1 AND cursor > $2 ORDER BY cursor LIMIT $3',
                [query.sessionKey, after, limit],
              );
        return rows.map((row) => {
          const { event, problem } = readEventRow(row);
          if (problem !== undefined) corruptRows.report(problem);
          return event;
        });
      }),
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
