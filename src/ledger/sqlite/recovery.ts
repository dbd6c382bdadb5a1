import { isRuntimeError } from '../../core/index.js';
import { admittedMessageIds, stillToRun } from '../../policies/index.js';
import { recentLimit, type RecoveryStore, type SessionState } from '../contract/recovery-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { readEventRow } from '../sql/event-rows.js';
import { prepareRecoveryStatements, type RecoveryStatements } from './recovery-statements.js';
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

/** What the SQLite recovery reads besides its own statements. */
export interface SqliteRecoveryDeps {
  readonly corruptRows: CorruptRowLog;
  /** The session's paused run with its latest batch (the run store's; synchronous). */
  readonly pausedOf: (sessionKey: string) => SessionState['paused'];
}

/** The ids of the messages a session's user turns were made of (their `extra` column, validated as turns are). */
function admitted(sql: RecoveryStatements, sessionKey: string): Set<string> {
  const rows = sql.admittedTurns.all(sessionKey) as { extra: string }[];
  return admittedMessageIds(
    rows.map((row) =>
      toTurnRecord({
        session_key: sessionKey,
        run_id: '',
        idx: 0,
        role: 'user',
        content: '',
        at: 0,
        extra: row.extra,
      }),
    ),
  );
}

/**
 * Load one session's state. A corrupt row of the session (its record, an inbox row with an unknown status, which
 * would silently never run, its paused run) fails the load with `ledger_corrupt`; other sessions load as usual.
 */
function loadSession(sql: RecoveryStatements, deps: SqliteRecoveryDeps, sessionKey: string): SessionState {
  const row = sql.getSession.get(sessionKey) as SessionRow | undefined;
  const record = row === undefined ? undefined : toSessionRecord(row);
  const unknown = sql.unknownStatusOf.get(sessionKey) as InboxRow | undefined;
  if (unknown !== undefined) toInboxRecord(unknown);
  const candidates = (sql.toRun.all(sessionKey) as InboxRow[]).map(toInboxRecord);
  const pending = stillToRun(candidates, () => admitted(sql, sessionKey));
  const paused = deps.pausedOf(sessionKey);
  return {
    record,
    lastSeq: (sql.lastSeq.get({ key: sessionKey }) as { seq: number }).seq,
    lastOrder: (sql.lastOrder.get(sessionKey) as { ord: number | null }).ord ?? 0,
    pending,
    recent: (sql.recentIds.all(sessionKey, recentLimit) as { message_id: string; accepted_at: number }[]).map(
      (recent) => [recent.message_id, recent.accepted_at] as const,
    ),
    ...(paused === undefined ? {} : { paused }),
  };
}

/** Sessions with messages to run, and those whose inbox holds an unknown status (their load reports it). */
function sessionsWithPending(sql: RecoveryStatements, deps: SqliteRecoveryDeps): string[] {
  const keys = new Set<string>();
  // A session whose candidates are only steered ones asks the policy (through a load): a session that cannot load counts.
  const hasPending = (sessionKey: string): boolean => {
    try {
      return loadSession(sql, deps, sessionKey).pending.length > 0;
    } catch (error) {
      if (isRuntimeError(error, 'ledger_corrupt')) return true;
      throw error;
    }
  };
  for (const row of sql.sessionsToRun.all() as { session_key: string; lowest: string }[]) {
    if (row.lowest === 'pending' || hasPending(row.session_key)) keys.add(row.session_key);
  }
  for (const row of sql.sessionsWithUnknownStatus.all() as InboxRow[]) {
    const problem = corrupt('inbox', inboxRowName(row), `unknown status "${row.status}"`, row.session_key);
    deps.corruptRows.report(problem);
    keys.add(row.session_key);
  }
  return [...keys];
}

/** The token delta rows of a run, in order. */
function runDeltas(sql: RecoveryStatements, runId: string): EventRow[] {
  const known = sql.getRunSession.get(runId) !== undefined;
  return (known ? sql.runDeltas : sql.runDeltasWithoutRun).all({ run: runId }) as EventRow[];
}

/** Create what a restart reads of the SQLite ledger; which messages are still to run is the `stillToRun` policy's. */
export function createSqliteRecovery(
  { db, readEventLog: read }: SqliteAccess,
  deps: SqliteRecoveryDeps,
): RecoveryStore {
  const sql = prepareRecoveryStatements(db);
  const { corruptRows } = deps;
  return {
    loadSession: (sessionKey) => read(() => loadSession(sql, deps, sessionKey)),
    listSessionsWithPending: () => read(() => sessionsWithPending(sql, deps)),
    runText: (runId) =>
      read(() =>
        corruptRows
          .readEach(runDeltas(sql, runId), (row) => {
            const { event, problem } = readEventRow(row);
            if (problem !== undefined) throw problem;
            return event.type === 'assistant.delta' ? event.delta : '';
          })
          .join(''),
      ),
    lastSeq: (sessionKey) => read(() => (sql.lastSeq.get({ key: sessionKey }) as { seq: number }).seq),
    onCorruptRow: (listener) => corruptRows.listen(listener),
  };
}
