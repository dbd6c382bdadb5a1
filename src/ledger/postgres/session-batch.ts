import { inboxStatuses } from '../contract/inbox-store.js';
import { recentLimit, type RecoveryStore } from '../contract/recovery-store.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';
import { isRuntimeError, type RuntimeError } from '../../core/index.js';
import { keysWithSteered, latestPaused, sessionLoads, type RecentRow } from '../sql/session-loads.js';
import type { InboxRow, RunRow, SessionRow } from '../sql/rows.js';
import type { PostgresAccess } from './access.js';
import type { PostgresQuery } from './queue.js';

/** The known inbox statuses as written in SQL (the `inbox_unknown_status` index has this very term). */
const knownStatuses = `(${inboxStatuses.map((status) => `'${status}'`).join(', ')})`;

/** Each statement takes the batch's keys as one text array, so one statement serves any batch. */
const sql = {
  sessions: 'SELECT * FROM sessions WHERE session_key = ANY($1::text[])',
  // The candidates of the still-to-run rule, and the rows of an unknown status (each load reports its first).
  toRun: `SELECT * FROM inbox WHERE session_key = ANY($1::text[]) AND status IN ('pending', 'steered')
    UNION ALL SELECT * FROM inbox WHERE session_key = ANY($1::text[]) AND status NOT IN ${knownStatuses}`,
  recent: `SELECT recent.* FROM unnest($1::text[]) AS k(key) CROSS JOIN LATERAL
    (SELECT session_key, message_id, accepted_at, ord FROM inbox WHERE session_key = k.key
      ORDER BY ord DESC LIMIT $2) AS recent`,
  lastSeqs: `SELECT k.key AS session_key,
    GREATEST(coalesce((SELECT seq FROM events WHERE session_key = k.key ORDER BY cursor DESC LIMIT 1), 0),
      coalesce((SELECT last_seq FROM seq_marks WHERE session_key = k.key), 0)) AS seq
    FROM unnest($1::text[]) AS k(key)`,
  admitted: `SELECT session_key, extra FROM turns
    WHERE session_key = ANY($1::text[]) AND role = 'user' AND extra IS NOT NULL`,
  paused: `SELECT * FROM runs WHERE session_key = ANY($1::text[])
    AND status IN ('awaiting_approval', 'awaiting_tool_results') ORDER BY id`,
};

/** Every read of one batch, in one queued work item (so they see the same state). */
async function readBatch(
  query: PostgresQuery,
  sessionKeys: readonly string[],
  latestBatch: (query: PostgresQuery, runId: string) => Promise<ToolCallRecord[]>,
) {
  const keys = [...new Set(sessionKeys)];
  const toRun = (await query<InboxRow>(sql.toRun, [keys])).rows;
  const steered = keysWithSteered(toRun);
  const paused = latestPaused((await query<RunRow>(sql.paused, [keys])).rows);
  const batches = new Map<string, ToolCallRecord[] | RuntimeError>();
  for (const row of paused) {
    try {
      batches.set(row.run_id, await latestBatch(query, row.run_id));
    } catch (error) {
      // A corrupt call fails its run's session alone, as it fails that session's `loadSession`.
      if (!isRuntimeError(error, 'ledger_corrupt')) throw error;
      batches.set(row.run_id, error);
    }
  }
  return sessionLoads(sessionKeys, {
    sessions: (await query<SessionRow>(sql.sessions, [keys])).rows,
    toRun,
    recent: (await query<RecentRow>(sql.recent, [keys, recentLimit])).rows,
    lastSeqs: (await query<{ session_key: string; seq: number }>(sql.lastSeqs, [keys])).rows,
    admitted:
      steered.length === 0
        ? []
        : (await query<{ session_key: string; extra: string }>(sql.admitted, [steered])).rows,
    paused,
    batches,
  });
}

/** `loadSessions` of the Postgres ledger: one statement per table for the whole batch, in one read. */
export function createPostgresSessionBatch(
  { readEventLog: read }: PostgresAccess,
  latestBatch: (query: PostgresQuery, runId: string) => Promise<ToolCallRecord[]>,
): Required<Pick<RecoveryStore, 'loadSessions'>> {
  return {
    loadSessions: (sessionKeys) => read((query) => readBatch(query, sessionKeys, latestBatch)),
  };
}
