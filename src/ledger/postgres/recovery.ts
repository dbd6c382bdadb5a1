import { isRuntimeError } from '../../core/index.js';
import { admittedMessageIds, stillToRun } from '../../policies/index.js';
import type { PostgresAccess } from './access.js';
import type { PostgresQuery } from './queue.js';
import { recentLimit, type RecoveryStore, type SessionState } from '../contract/recovery-store.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { readEventRow } from '../sql/event-rows.js';
import {
  corrupt,
  inboxRowName,
  toInboxRecord,
  toSessionRecord,
  toTurnRecord,
  type EventRow,
  type InboxRow,
  type SessionRow,
} from '../sql/rows.js';
import { inboxStatuses } from '../contract/inbox-store.js';

/** The known inbox statuses as written in SQL (the `inbox_unknown_status` index has this very term). */
const knownStatuses = `(${inboxStatuses.map((status) => `'${status}'`).join(', ')})`;

const sql = {
  lastSeq: `SELECT GREATEST(coalesce((SELECT seq FROM events WHERE session_key = $1 ORDER BY cursor DESC LIMIT 1), 0),
      coalesce((SELECT last_seq FROM seq_marks WHERE session_key = $1), 0)) AS seq`,
  toRun: "SELECT * FROM inbox WHERE session_key = $1 AND status IN ('pending', 'steered') ORDER BY ord",
  unknownStatusOf: `SELECT * FROM inbox WHERE session_key = $1 AND status NOT IN ${knownStatuses} ORDER BY ord LIMIT 1`,
  sessionsWithUnknownStatus: `SELECT DISTINCT ON (session_key) * FROM inbox WHERE status NOT IN ${knownStatuses}
      ORDER BY session_key, ord`,
  sessionsToRun: `SELECT session_key, bool_or(status = 'pending') AS pending FROM inbox
      WHERE status IN ('pending', 'steered') GROUP BY session_key ORDER BY session_key`,
  admittedTurns: "SELECT extra FROM turns WHERE session_key = $1 AND role = 'user' AND extra IS NOT NULL",
  recentIds: `SELECT message_id, accepted_at FROM (SELECT * FROM inbox WHERE session_key = $1 ORDER BY ord DESC LIMIT $2)
      AS recent ORDER BY ord`,
  // What loading a session reads, in one statement (rows as JSON: their BIGINTs are numbers either way).
  session: `SELECT
      (SELECT row_to_json(s) FROM sessions s WHERE session_key = $1) AS record,
      (SELECT row_to_json(u) FROM (SELECT * FROM inbox WHERE session_key = $1 AND status NOT IN ${knownStatuses}
        ORDER BY ord LIMIT 1) u) AS unknown,
      (SELECT coalesce(json_agg(c ORDER BY c.ord), '[]') FROM (SELECT * FROM inbox WHERE session_key = $1
        AND status IN ('pending', 'steered')) c) AS candidates,
      (SELECT coalesce(max(ord), 0) FROM inbox WHERE session_key = $1) AS last_order,
      (SELECT coalesce(json_agg(json_build_array(r.message_id, r.accepted_at) ORDER BY r.ord), '[]') FROM
        (SELECT * FROM inbox WHERE session_key = $1 ORDER BY ord DESC LIMIT $2) r) AS recent,
      EXISTS (SELECT 1 FROM runs WHERE session_key = $1
        AND status IN ('awaiting_approval', 'awaiting_tool_results')) AS paused,
      GREATEST(coalesce((SELECT seq FROM events WHERE session_key = $1 ORDER BY cursor DESC LIMIT 1), 0),
        coalesce((SELECT last_seq FROM seq_marks WHERE session_key = $1), 0)) AS last_seq`,
  runDeltas: `SELECT * FROM events WHERE run_id = $1 AND type = 'assistant.delta'
      AND session_key = coalesce((SELECT session_key FROM runs WHERE run_id = $1), session_key) ORDER BY cursor`,
};

/** What the Postgres recovery reads besides its own statements. */
export interface PostgresRecoveryDeps {
  readonly corruptRows: CorruptRowLog;
  /** The session's paused run with its latest batch (the run store's). */
  readonly pausedOf: (query: PostgresQuery, sessionKey: string) => Promise<SessionState['paused']>;
}

/** The ids of the messages a session's user turns were made of (their `extra` column, validated as turns are). */
async function admitted(query: PostgresQuery, sessionKey: string): Promise<Set<string>> {
  const { rows } = await query<{ extra: string }>(sql.admittedTurns, [sessionKey]);
  const turn = { session_key: sessionKey, run_id: '', idx: 0, role: 'user', content: '', at: 0 };
  return admittedMessageIds(rows.map((row) => toTurnRecord({ ...turn, extra: row.extra })));
}

async function lastSeq(query: PostgresQuery, sessionKey: string): Promise<number> {
  return (await query<{ seq: number }>(sql.lastSeq, [sessionKey])).rows[0]?.seq ?? 0;
}

/** The one row of `sql.session`. */
interface LoadedRow {
  readonly record: SessionRow | null;
  readonly unknown: InboxRow | null;
  readonly candidates: InboxRow[];
  readonly last_order: number;
  readonly recent: [string, number][];
  readonly paused: boolean;
  readonly last_seq: number;
}

/**
 * Load one session's state. A corrupt row of the session (its record, an inbox row with an unknown status, its
 * paused run) fails the load with `ledger_corrupt`; other sessions load as usual.
 */
async function loadSession(
  query: PostgresQuery,
  deps: PostgresRecoveryDeps,
  sessionKey: string,
): Promise<SessionState> {
  const read = (await query<LoadedRow>(sql.session, [sessionKey, recentLimit])).rows[0] as LoadedRow;
  const record = read.record === null ? undefined : toSessionRecord(read.record);
  if (read.unknown !== null) toInboxRecord(read.unknown);
  const candidates = read.candidates.map(toInboxRecord);
  const admittedIds = candidates.some((candidate) => candidate.status === 'steered')
    ? await admitted(query, sessionKey)
    : new Set<string>();
  const pending = stillToRun(candidates, () => admittedIds);
  const paused = read.paused ? await deps.pausedOf(query, sessionKey) : undefined;
  return {
    record,
    lastSeq: Number(read.last_seq),
    lastOrder: Number(read.last_order),
    pending,
    recent: read.recent,
    ...(paused === undefined ? {} : { paused }),
  };
}

/** Sessions with messages to run, and those whose inbox holds an unknown status (their load reports it). */
async function sessionsWithPending(query: PostgresQuery, deps: PostgresRecoveryDeps): Promise<string[]> {
  const keys = new Set<string>();
  for (const row of (await query<{ session_key: string; pending: boolean }>(sql.sessionsToRun)).rows) {
    if (row.pending) {
      keys.add(row.session_key);
      continue;
    }
    // Only steered candidates: the policy decides, through a load (a session that cannot load counts).
    try {
      if ((await loadSession(query, deps, row.session_key)).pending.length > 0) keys.add(row.session_key);
    } catch (error) {
      if (!isRuntimeError(error, 'ledger_corrupt')) throw error;
      keys.add(row.session_key);
    }
  }
  for (const row of (await query<InboxRow>(sql.sessionsWithUnknownStatus)).rows) {
    deps.corruptRows.report(
      corrupt('inbox', inboxRowName(row), `unknown status "${row.status}"`, row.session_key),
    );
    keys.add(row.session_key);
  }
  return [...keys];
}

/** Create what a restart reads of the Postgres ledger; which messages are still to run is the `stillToRun` policy's. */
export function createPostgresRecovery(
  { readEventLog: read }: PostgresAccess,
  deps: PostgresRecoveryDeps,
): RecoveryStore {
  const { corruptRows } = deps;
  return {
    loadSession: (sessionKey) => read((query) => loadSession(query, deps, sessionKey)),
    listSessionsWithPending: () => read((query) => sessionsWithPending(query, deps)),
    runText: (runId) =>
      read(async (query) =>
        corruptRows
          .readEach((await query<EventRow>(sql.runDeltas, [runId])).rows, (row) => {
            const { event, problem } = readEventRow(row);
            if (problem !== undefined) throw problem;
            return event.type === 'assistant.delta' ? event.delta : '';
          })
          .join(''),
      ),
    lastSeq: (sessionKey) => read((query) => lastSeq(query, sessionKey)),
    onCorruptRow: (listener) => corruptRows.listen(listener),
  };
}
