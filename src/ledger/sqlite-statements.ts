import type Database from 'better-sqlite3';
import { inboxStatuses } from './ledger.js';

/** The paused statuses as written in SQL (the `runs_paused` index has this very term, so queries can use it). */
const paused = "('awaiting_approval', 'awaiting_tool_results')";
/** The statuses of a run that has not ended. */
const open = "('running', 'awaiting_approval', 'awaiting_tool_results')";
/** The known inbox statuses as written in SQL (the `inbox_unknown_status` index has this very term). */
const knownStatuses = `(${inboxStatuses.map((status) => `'${status}'`).join(', ')})`;

/** Every statement the SQLite ledger runs, prepared once. */
export function prepareStatements(db: Database.Database): Record<StatementName, Database.Statement> {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  return {
    getSession: prepare('SELECT * FROM sessions WHERE session_key = ?'),
    putSession: prepare(
      `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at, tool_policy)
       VALUES (@session_key, @override, @snapshot, @epoch, @last_seq, @updated_at, @tool_policy)
       ON CONFLICT (session_key) DO UPDATE SET override = excluded.override, snapshot = excluded.snapshot,
         epoch = excluded.epoch, last_seq = excluded.last_seq, updated_at = excluded.updated_at,
         tool_policy = excluded.tool_policy`,
    ),
    listSessions: prepare('SELECT * FROM sessions'),
    lastSeq: prepare(
      `SELECT max(coalesce((SELECT seq FROM events WHERE session_key = @key ORDER BY cursor DESC LIMIT 1), 0),
         coalesce((SELECT last_seq FROM seq_marks WHERE session_key = @key), 0)) AS seq`,
    ),
    markSeqs: prepare(
      `INSERT INTO seq_marks (session_key, last_seq) SELECT session_key, max(seq) FROM events WHERE at < ? GROUP BY session_key
       ON CONFLICT (session_key) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)`,
    ),
    lastOrder: prepare('SELECT max(ord) AS ord FROM inbox WHERE session_key = ?'),
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
    appendMessage: prepare(
      `INSERT INTO inbox (session_key, ord, message_id, text, mode, status, accepted_at, sender_id, channel, thread,
         run_id, summary)
       VALUES (@session_key, @ord, @message_id, @text, @mode, @status, @accepted_at, @sender_id, @channel, @thread,
         @run_id, @summary)`,
    ),
    updateMessage: prepare(
      `UPDATE inbox SET status = @status, run_id = coalesce(@run_id, run_id), summary = coalesce(@summary, summary)
       WHERE session_key = @session_key
         AND ord = (SELECT max(ord) FROM inbox WHERE session_key = @session_key AND message_id = @message_id)`,
    ),
    listMessages: prepare('SELECT * FROM inbox WHERE session_key = ? ORDER BY ord'),
    openRun: prepare(
      `INSERT INTO runs (run_id, session_key, status, message_ids, provider, model, started_at, ended_at, error_code,
         error_message, input_tokens, output_tokens, cost, text)
       VALUES (@run_id, @session_key, @status, @message_ids, @provider, @model, @started_at, @ended_at, @error_code,
         @error_message, @input_tokens, @output_tokens, @cost, @text)`,
    ),
    closeRun: prepare(
      `UPDATE runs SET status = @status, ended_at = @ended_at, text = @text, input_tokens = @input_tokens,
         output_tokens = @output_tokens, cost = @cost, error_code = @error_code, error_message = @error_message
       WHERE run_id = @run_id`,
    ),
    getRun: prepare('SELECT * FROM runs WHERE run_id = ?'),
    listRuns: prepare('SELECT * FROM runs WHERE session_key = ? ORDER BY rowid'),
    listOpenRuns: prepare("SELECT * FROM runs WHERE status = 'running' ORDER BY rowid"),
    listPausedRuns: prepare(`SELECT * FROM runs WHERE status IN ${paused} ORDER BY rowid`),
    pausedRunOf: prepare(
      `SELECT * FROM runs WHERE session_key = ? AND status IN ${paused} ORDER BY rowid DESC LIMIT 1`,
    ),
    // NULL progress keeps what is stored: a status change alone leaves text, usage and cost as they were.
    setRunStatus: prepare(
      `UPDATE runs SET status = @status, text = coalesce(@text, text),
         input_tokens = coalesce(@input_tokens, input_tokens), output_tokens = coalesce(@output_tokens, output_tokens),
         cost = coalesce(@cost, cost)
       WHERE run_id = @run_id AND status IN ${open}`,
    ),
    runDeltas: prepare("SELECT * FROM events WHERE run_id = ? AND type = 'assistant.delta' ORDER BY cursor"),
    appendTurn: prepare(
      `INSERT INTO turns (session_key, run_id, idx, role, content, at, extra)
       VALUES (@session_key, @run_id, @idx, @role, @content, @at, @extra)`,
    ),
    listTurns: prepare('SELECT * FROM turns WHERE session_key = ? ORDER BY id'),
    listRunTurns: prepare('SELECT * FROM turns WHERE run_id = ? ORDER BY id'),
    lastTurns: prepare(
      'SELECT * FROM (SELECT * FROM turns WHERE session_key = ? ORDER BY id DESC LIMIT ?) ORDER BY id',
    ),
    appendEvent: prepare(
      `INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
       VALUES (@cursor, @session_key, @seq, @type, @run_id, @at, @body)`,
    ),
    readEvents: prepare('SELECT * FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?'),
    readSessionEvents: prepare(
      'SELECT * FROM events WHERE session_key = ? AND cursor > ? ORDER BY cursor LIMIT ?',
    ),
    maxCursor: prepare('SELECT max(cursor) AS cursor FROM events'),
    getMeta: prepare('SELECT value FROM meta WHERE key = ?'),
    putMeta: prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    pruneEvents: prepare('DELETE FROM events WHERE at < ?'),
    loadProfiles: prepare('SELECT profile_id, state FROM auth_profiles'),
    saveProfile: prepare(
      `INSERT INTO auth_profiles (profile_id, state, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (profile_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
  };
}

export type StatementName =
  | 'getSession'
  | 'putSession'
  | 'listSessions'
  | 'lastSeq'
  | 'lastOrder'
  | 'toRun'
  | 'sessionsToRun'
  | 'unknownStatusOf'
  | 'sessionsWithUnknownStatus'
  | 'admittedTurns'
  | 'appendMessage'
  | 'updateMessage'
  | 'listMessages'
  | 'openRun'
  | 'closeRun'
  | 'getRun'
  | 'listRuns'
  | 'listOpenRuns'
  | 'listPausedRuns'
  | 'pausedRunOf'
  | 'setRunStatus'
  | 'runDeltas'
  | 'appendTurn'
  | 'listTurns'
  | 'listRunTurns'
  | 'lastTurns'
  | 'appendEvent'
  | 'readEvents'
  | 'readSessionEvents'
  | 'maxCursor'
  | 'getMeta'
  | 'putMeta'
  | 'pruneEvents'
  | 'markSeqs'
  | 'recentIds'
  | 'loadProfiles'
  | 'saveProfile';
