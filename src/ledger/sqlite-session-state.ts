import type Database from 'better-sqlite3';
import { isRuntimeError } from '../core/errors.js';
import { recentLimit, type SessionState } from './ledger.js';
import type { CorruptRowLog } from './sqlite-corrupt-rows.js';
import {
  corrupt,
  inboxRowName,
  toInboxRecord,
  toRunRecord,
  toSessionRecord,
  toTurnRecord,
  type InboxRow,
  type RunRow,
  type SessionRow,
} from './sqlite-rows.js';
import type { StatementName } from './sqlite-statements.js';
import type { ToolCallRecord } from './tool-call-records.js';

type Statements = Record<StatementName, Database.Statement>;

/**
 * Hydration reads of the SQLite ledger: one session's state, and which sessions have messages to run. A corrupt
 * row of a session (its record, an inbox row with an unknown status, its paused run) fails that session's load
 * with `ledger_corrupt`; the other sessions load as usual.
 */
export function createSqliteSessionState(deps: {
  sql: Statements;
  latestBatch: (runId: string) => ToolCallRecord[];
  corruptRows: CorruptRowLog;
}) {
  const { sql, latestBatch, corruptRows } = deps;

  function admitted(sessionKey: string): Set<string> {
    const ids = new Set<string>();
    for (const row of sql.admittedTurns.all(sessionKey) as { extra: string }[]) {
      const extra = toTurnRecord({
        session_key: sessionKey,
        run_id: '',
        idx: 0,
        role: 'user',
        content: '',
        at: 0,
        extra: row.extra,
      });
      for (const id of extra.messageIds ?? []) ids.add(id);
    }
    return ids;
  }

  /** An inbox row whose status is none of the known ones would silently never run: it is corrupt. */
  function refuseUnknownStatus(sessionKey: string): void {
    const unknown = sql.unknownStatusOf.get(sessionKey) as InboxRow | undefined;
    if (unknown !== undefined) toInboxRecord(unknown);
  }

  function loadSession(sessionKey: string): SessionState {
    const row = sql.getSession.get(sessionKey) as SessionRow | undefined;
    const record = row === undefined ? undefined : toSessionRecord(row);
    refuseUnknownStatus(sessionKey);
    const toRun = (sql.toRun.all(sessionKey) as InboxRow[]).map(toInboxRecord);
    const steered = toRun.some((message) => message.status === 'steered')
      ? admitted(sessionKey)
      : new Set<string>();
    const paused = sql.pausedRunOf.get(sessionKey) as RunRow | undefined;
    return {
      record,
      lastSeq: lastSeq(sessionKey),
      lastOrder: (sql.lastOrder.get(sessionKey) as { ord: number | null }).ord ?? 0,
      pending: toRun.filter((message) => message.status === 'pending' || !steered.has(message.messageId)),
      recent: (
        sql.recentIds.all(sessionKey, recentLimit) as { message_id: string; accepted_at: number }[]
      ).map((recent) => [recent.message_id, recent.accepted_at] as const),
      ...(paused === undefined
        ? {}
        : { paused: { run: toRunRecord(paused), calls: latestBatch(paused.run_id) } }),
    };
  }

  function lastSeq(sessionKey: string): number {
    return (sql.lastSeq.get({ key: sessionKey }) as { seq: number }).seq;
  }

  /** Sessions with messages to run, and those whose inbox holds an unknown status (their load reports it). */
  function sessionsWithPending(): string[] {
    const keys = new Set<string>();
    for (const row of sql.sessionsToRun.all() as { session_key: string; lowest: string }[]) {
      if (row.lowest === 'pending' || hasPending(row.session_key)) keys.add(row.session_key);
    }
    for (const row of sql.sessionsWithUnknownStatus.all() as InboxRow[]) {
      corruptRows.report(
        corrupt('inbox', inboxRowName(row), `unknown status "${row.status}"`, row.session_key),
      );
      keys.add(row.session_key);
    }
    return [...keys];
  }

  /** True when a session with only steered rows still has messages to run; a session that cannot load counts. */
  function hasPending(sessionKey: string): boolean {
    try {
      return loadSession(sessionKey).pending.length > 0;
    } catch (error) {
      if (isRuntimeError(error, 'ledger_corrupt')) return true;
      throw error;
    }
  }

  return { loadSession, lastSeq, sessionsWithPending };
}
