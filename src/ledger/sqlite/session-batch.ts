import type Database from 'better-sqlite3';
import { inboxStatuses } from '../contract/inbox-store.js';
import { recentLimit, type RecoveryStore } from '../contract/recovery-store.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';
import {
  batchOrCorrupt,
  keysWithSteered,
  latestPaused,
  sessionLoads,
  type RecentRow,
} from '../sql/session-loads.js';
import type { InboxRow, RunRow, SessionRow } from '../sql/rows.js';
import type { SqliteAccess } from './access.js';

/** The known inbox statuses as written in SQL (the `inbox_unknown_status` index has this very term). */
const knownStatuses = `(${inboxStatuses.map((status) => `'${status}'`).join(', ')})`;

/** Each statement takes the batch's keys as one JSON array (`json_each`), so one statement serves any batch. */
function prepareBatchStatements(db: Database.Database) {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  const keys = 'json_each(@keys) AS k';
  return {
    sessions: prepare(`SELECT s.* FROM ${keys} CROSS JOIN sessions AS s WHERE s.session_key = k.value`),
    // The candidates of the still-to-run rule, and the rows of an unknown status (each load reports its first).
    toRun: prepare(
      `SELECT i.* FROM ${keys} CROSS JOIN inbox AS i INDEXED BY inbox_to_run
         WHERE i.session_key = k.value AND i.status IN ('pending', 'steered')
       UNION ALL
       SELECT i.* FROM ${keys} CROSS JOIN inbox AS i INDEXED BY inbox_unknown_status
         WHERE i.session_key = k.value AND i.status NOT IN ${knownStatuses}`,
    ),
    // The latest `recentLimit` rows of each session: those from the limit-th newest order on.
    recent: prepare(
      `SELECT i.session_key, i.message_id, i.accepted_at, i.ord FROM ${keys} CROSS JOIN inbox AS i
         WHERE i.session_key = k.value AND i.ord >= coalesce((SELECT ord FROM inbox
           WHERE session_key = k.value ORDER BY ord DESC LIMIT 1 OFFSET @limit - 1), 0)`,
    ),
    lastSeqs: prepare(
      `SELECT k.value AS session_key,
         max(coalesce((SELECT seq FROM events WHERE session_key = k.value ORDER BY cursor DESC LIMIT 1), 0),
           coalesce((SELECT last_seq FROM seq_marks WHERE session_key = k.value), 0)) AS seq
       FROM ${keys}`,
    ),
    admitted: prepare(
      `SELECT t.session_key, t.extra FROM ${keys} CROSS JOIN turns AS t
         WHERE t.session_key = k.value AND t.role = 'user' AND t.extra IS NOT NULL`,
    ),
    paused: prepare(
      `SELECT r.* FROM ${keys} CROSS JOIN runs AS r
         WHERE r.session_key = k.value AND r.status IN ('awaiting_approval', 'awaiting_tool_results')
         ORDER BY r.rowid`,
    ),
  };
}

/**
 * `loadSessions` of the SQLite ledger: one statement per table for the whole batch (the paused runs' latest tool
 * calls, rare, one each), all in one read so they see the same state.
 */
export function createSqliteSessionBatch(
  { db, readEventLog: read }: SqliteAccess,
  latestBatch: (runId: string) => ToolCallRecord[],
): Required<Pick<RecoveryStore, 'loadSessions'>> {
  const sql = prepareBatchStatements(db);
  return {
    loadSessions: (sessionKeys) =>
      read(() => {
        const keys = JSON.stringify([...new Set(sessionKeys)]);
        const toRun = sql.toRun.all({ keys }) as InboxRow[];
        const steered = keysWithSteered(toRun);
        const paused = latestPaused(sql.paused.all({ keys }) as RunRow[]);
        return sessionLoads(sessionKeys, {
          sessions: sql.sessions.all({ keys }) as SessionRow[],
          toRun,
          recent: sql.recent.all({ keys, limit: recentLimit }) as RecentRow[],
          lastSeqs: sql.lastSeqs.all({ keys }) as { session_key: string; seq: number }[],
          admitted:
            steered.length === 0
              ? []
              : (sql.admitted.all({ keys: JSON.stringify(steered) }) as {
                  session_key: string;
                  extra: string;
                }[]),
          paused,
          batches: new Map(paused.map((row) => [row.run_id, batchOrCorrupt(() => latestBatch(row.run_id))])),
        });
      }),
  };
}
