import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import type { PostgresAccess } from './access.js';
import { gatherRows, type RowStatement } from './queue.js';
import { valuesOf } from './rows.js';
import type { SessionStore } from '../contract/session-store.js';
import { sessionRow } from '../sql/params.js';
import { toSessionRecord, type SessionRow } from '../sql/rows.js';

const columns = [
  'session_key',
  'override',
  'snapshot',
  'epoch',
  'last_seq',
  'updated_at',
  'tool_policy',
] as const;
/** Session records, gathered from every put of a transaction into one statement (see `gatherRows`). */
const putSessionsSql: RowStatement = {
  sql: `INSERT INTO sessions (${columns.join(', ')})
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[])
  ON CONFLICT (session_key) DO UPDATE SET override = excluded.override, snapshot = excluded.snapshot,
    epoch = excluded.epoch, last_seq = excluded.last_seq, updated_at = excluded.updated_at,
    tool_policy = excluded.tool_policy`,
  table: 'sessions',
};

/** Create the session store on the Postgres ledger; a corrupt record is skipped (and reported) in lists. */
export function createPostgresSessions(
  { write, read }: PostgresAccess,
  corruptRows: CorruptRowLog,
): SessionStore {
  return {
    getSession: (sessionKey) =>
      read(async (query) => {
        const { rows } = await query<SessionRow>('SELECT * FROM sessions WHERE session_key = $1', [
          sessionKey,
        ]);
        return rows[0] === undefined ? undefined : toSessionRecord(rows[0]);
      }),
    // Keyed by session: a second put of one session in a transaction goes in a statement after the first.
    putSession: (record) =>
      write((query) =>
        gatherRows(
          query,
          putSessionsSql,
          valuesOf(sessionRow(record), columns).map((value) => [value]),
          [record.sessionKey],
        ),
      ),
    listSessions: () =>
      read(async (query) => {
        const { rows } = await query<SessionRow>('SELECT * FROM sessions ORDER BY session_key');
        return corruptRows.readEach(rows, toSessionRecord);
      }),
    listSessionKeys: ({ after, limit }) =>
      read(async (query) => {
        // COLLATE "C": byte order, as the other ledgers and JavaScript compare keys.
        const { rows } = await query<{ session_key: string; updated_at: string | number }>(
          `SELECT session_key, updated_at FROM sessions
           WHERE $1::text IS NULL OR session_key COLLATE "C" > $1 ORDER BY session_key COLLATE "C" LIMIT $2`,
          [after ?? null, limit],
        );
        return rows.map((row) => ({ sessionKey: row.session_key, updatedAt: Number(row.updated_at) }));
      }),
  };
}
