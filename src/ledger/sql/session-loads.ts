import { isRuntimeError, type RuntimeError } from '../../core/index.js';
import { admittedMessageIds, stillToRun } from '../../policies/index.js';
import type { InboxRecord } from '../contract/inbox-store.js';
import type { SessionLoad, SessionState } from '../contract/recovery-store.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';
import {
  toInboxRecord,
  toRunRecord,
  toSessionRecord,
  toTurnRecord,
  type InboxRow,
  type RunRow,
  type SessionRow,
} from './rows.js';

/** One of a session's latest inbox rows (at most `recentLimit` of them per session). */
export interface RecentRow {
  readonly session_key: string;
  readonly message_id: string;
  readonly accepted_at: number;
  readonly ord: number;
}

/**
 * What a SQL ledger read for a batch of sessions, one read per table: the rows of every key together, in any
 * session order. `toRun` holds the inbox rows still to run or of an unknown status; `admitted` the user turns'
 * `extra` of the sessions with a steered candidate (`keysWithSteered`); `paused` each session's latest paused run,
 * and `batches` the latest batch of tool calls of each of those runs, by run id.
 */
export interface SessionLoadRows {
  readonly sessions: readonly SessionRow[];
  readonly toRun: readonly InboxRow[];
  readonly recent: readonly RecentRow[];
  readonly lastSeqs: readonly { readonly session_key: string; readonly seq: number | null }[];
  readonly admitted: readonly { readonly session_key: string; readonly extra: string }[];
  readonly paused: readonly RunRow[];
  /** A run's latest batch, or the `ledger_corrupt` reading it met (which fails that run's session alone). */
  readonly batches: ReadonlyMap<string, ToolCallRecord[] | RuntimeError>;
}

/** The latest paused run of each session, from paused runs listed oldest first. */
export function latestPaused(rows: readonly RunRow[]): RunRow[] {
  return [...new Map(rows.map((row) => [row.session_key, row])).values()];
}

/** `read` of one paused run's latest batch, or the `ledger_corrupt` it threw (any other error is thrown). */
export function batchOrCorrupt(read: () => ToolCallRecord[]): ToolCallRecord[] | RuntimeError {
  try {
    return read();
  } catch (error) {
    if (isRuntimeError(error, 'ledger_corrupt')) return error;
    throw error;
  }
}

/** The sessions whose candidates include a steered message: only theirs need the admitted turns read. */
export function keysWithSteered(toRun: readonly InboxRow[]): string[] {
  return [...new Set(toRun.filter((row) => row.status === 'steered').map((row) => row.session_key))];
}

/** Rows grouped by their session key, each group in the order the rows came. */
function bySession<Row extends { readonly session_key: string }>(rows: readonly Row[]): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const group = groups.get(row.session_key);
    if (group === undefined) groups.set(row.session_key, [row]);
    else group.push(row);
  }
  return groups;
}

const byOrder = (a: { ord: number }, b: { ord: number }): number => a.ord - b.ord;

/** The ids of the messages a session's user turns were made of (their `extra`, validated as turns are). */
function admittedOf(sessionKey: string, extras: readonly { extra: string }[]): Set<string> {
  const turn = { session_key: sessionKey, run_id: '', idx: 0, role: 'user', content: '', at: 0 };
  return admittedMessageIds(extras.map((row) => toTurnRecord({ ...turn, extra: row.extra })));
}

/** The rows of one session, grouped. */
interface SessionRows {
  readonly session: SessionRow | undefined;
  readonly toRun: InboxRow[];
  readonly recent: RecentRow[];
  readonly seq: number;
  readonly admitted: readonly { extra: string }[];
  readonly paused: RunRow | undefined;
}

/**
 * One session's state from its rows, checked in the order `loadSession` checks them: its record, then an inbox row
 * of an unknown status (which would silently never run), then its candidates and its paused run.
 */
function stateOf(sessionKey: string, rows: SessionRows, batches: SessionLoadRows['batches']): SessionState {
  const record = rows.session === undefined ? undefined : toSessionRecord(rows.session);
  // The first row of an unknown status fails the load (`toInboxRecord` throws its ledger_corrupt).
  const unknown = rows.toRun.find((row) => row.status !== 'pending' && row.status !== 'steered');
  if (unknown !== undefined) toInboxRecord(unknown);
  const candidates: InboxRecord[] = rows.toRun.map(toInboxRecord);
  const pending = stillToRun(candidates, () => admittedOf(sessionKey, rows.admitted));
  const paused = rows.paused === undefined ? undefined : pausedOf(rows.paused, batches);
  return {
    record,
    lastSeq: rows.seq,
    lastOrder: rows.recent.at(-1)?.ord ?? 0,
    pending,
    recent: rows.recent.map((row) => [row.message_id, row.accepted_at] as const),
    ...(paused === undefined ? {} : { paused }),
  };
}

function pausedOf(row: RunRow, batches: SessionLoadRows['batches']): SessionState['paused'] {
  const run = toRunRecord(row);
  const calls = batches.get(row.run_id) ?? [];
  if (!Array.isArray(calls)) throw calls;
  return { run, calls };
}

/**
 * Each key's `SessionLoad` from the batch's rows, in the order of `sessionKeys`. A session whose rows fail
 * validation gets its `ledger_corrupt` alone; any other error is thrown (a bug, not a row).
 */
export function sessionLoads(sessionKeys: readonly string[], rows: SessionLoadRows): SessionLoad[] {
  const sessions = new Map(rows.sessions.map((row) => [row.session_key, row]));
  const toRun = bySession(rows.toRun);
  const recent = bySession(rows.recent);
  const seqs = new Map(rows.lastSeqs.map((row) => [row.session_key, row.seq ?? 0]));
  const admitted = bySession(rows.admitted);
  const paused = new Map(rows.paused.map((row) => [row.session_key, row]));
  return sessionKeys.map((sessionKey): SessionLoad => {
    const own: SessionRows = {
      session: sessions.get(sessionKey),
      toRun: (toRun.get(sessionKey) ?? []).sort(byOrder),
      recent: (recent.get(sessionKey) ?? []).sort(byOrder),
      seq: seqs.get(sessionKey) ?? 0,
      admitted: admitted.get(sessionKey) ?? [],
      paused: paused.get(sessionKey),
    };
    try {
      return { sessionKey, state: stateOf(sessionKey, own, rows.batches) };
    } catch (error) {
      if (isRuntimeError(error, 'ledger_corrupt')) return { sessionKey, error };
      throw error;
    }
  });
}
