import type Database from 'better-sqlite3';
import { inboxStatuses } from '../contract/inbox-store.js';

/** The known inbox statuses as written in SQL (the `inbox_unknown_status` index has this very term). */
const knownStatuses = `(${inboxStatuses.map((status) => `'${status}'`).join(', ')})`;

/** The statements of `prepareRecoveryStatements`. */
export type RecoveryStatements = Record<RecoveryStatementName, Database.Statement>;

type RecoveryStatementName =
  | 'getSession'
  | 'lastSeq'
  | 'lastOrder'
  | 'toRun'
  | 'unknownStatusOf'
  | 'sessionsWithUnknownStatus'
  | 'sessionsToRun'
  | 'admittedTurns'
  | 'recentIds'
  | 'getRunSession'
  | 'runDeltas'
  | 'runDeltasWithoutRun';

/** The reads a restart makes across the SQLite ledger's tables, prepared once. */
export function prepareRecoveryStatements(db: Database.Database): RecoveryStatements {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  return {
    getSession: prepare('SELECT * FROM sessions WHERE session_key = ?'),
    lastSeq: prepare(
      `SELECT max(coalesce((SELECT seq FROM events WHERE session_key = @key ORDER BY cursor DESC LIMIT 1), 0),
         coalesce((SELECT last_seq FROM seq_marks WHERE session_key = @key), 0)) AS seq`,
    ),
    lastOrder: prepare('SELECT max(ord) AS ord FROM inbox WHERE session_key = ?'),
    // The candidates of the still-to-run rule; the rule itself is the `stillToRun` policy's.
    toRun: prepare(
      "SELECT * FROM inbox WHERE session_key = ? AND status IN ('pending', 'steered') ORDER BY ord",
    ),
    unknownStatusOf: prepare(
      `SELECT * FROM inbox INDEXED BY inbox_unknown_status
       WHERE session_key = ? AND status NOT IN ${knownStatuses} ORDER BY ord LIMIT 1`,
    ),
    sessionsWithUnknownStatus: prepare(
      // One row per session: the bare columns come from the row with the lowest ord.
      `SELECT *, min(ord) FROM inbox INDEXED BY inbox_unknown_status
       WHERE status NOT IN ${knownStatuses} GROUP BY session_key`,
    ),
    sessionsToRun: prepare(
      "SELECT session_key, min(status) AS lowest FROM inbox WHERE status IN ('pending', 'steered') GROUP BY session_key",
    ),
    admittedTurns: prepare(
      "SELECT extra FROM turns WHERE session_key = ? AND role = 'user' AND extra IS NOT NULL",
    ),
    recentIds: prepare(
      'SELECT message_id, accepted_at FROM (SELECT * FROM inbox WHERE session_key = ? ORDER BY ord DESC LIMIT ?) ORDER BY ord',
    ),
    getRunSession: prepare('SELECT session_key FROM runs WHERE run_id = ?'),
    // Through the run's session (events_by_session); a run without a row (never opened) needs the scan below.
    runDeltas: prepare(
      `SELECT * FROM events WHERE session_key = (SELECT session_key FROM runs WHERE run_id = @run)
         AND run_id = @run AND type = 'assistant.delta' ORDER BY cursor`,
    ),
    runDeltasWithoutRun: prepare(
      "SELECT * FROM events WHERE run_id = @run AND type = 'assistant.delta' ORDER BY cursor",
    ),
  };
}
