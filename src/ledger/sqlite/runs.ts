import { RuntimeError } from '../../core/index.js';
import { openRunStatuses } from '../../core/index.js';
import type { SessionState } from '../contract/recovery-store.js';
import type { RunStore } from '../contract/run-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { openRunRow, runCloseRow, runStatusRow } from '../sql/params.js';
import { constraint, toRunRecord, type RunRow } from '../sql/rows.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';

/** The paused statuses as written in SQL (the `runs_paused` index has this very term, so queries can use it). */
const paused = "('awaiting_approval', 'awaiting_tool_results')";
/** The statuses of a run that has not ended. */
const open = "('running', 'awaiting_approval', 'awaiting_tool_results')";
/** The statuses `setRunStatus` moves a run between. */
const openStatuses = new Set<string>(openRunStatuses);

/** The run store of the SQLite ledger, and what its recovery reads of it. */
export interface SqliteRuns {
  readonly methods: RunStore;
  /** The session's paused run (the latest started) with its latest batch (synchronous: run inside a read). */
  readonly pausedOf: (sessionKey: string) => SessionState['paused'];
}

function prepareRunStatements(db: SqliteAccess['db']) {
  const prepare = (sql: string) => db.prepare(sql);
  return {
    openRun: prepare(
      `INSERT INTO runs (run_id, session_key, status, message_ids, provider, model, started_at, ended_at, error_code,
         error_message, input_tokens, output_tokens, cost, text, parent_run_id, parent_call_id)
       VALUES (@run_id, @session_key, @status, @message_ids, @provider, @model, @started_at, @ended_at, @error_code,
         @error_message, @input_tokens, @output_tokens, @cost, @text, @parent_run_id, @parent_call_id)`,
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
  };
}

/** Create the run store on the SQLite ledger's connection; a corrupt run is skipped (and reported) in lists. */
export function createSqliteRuns(
  { db, write, read }: SqliteAccess,
  corruptRows: CorruptRowLog,
  latestBatch: (runId: string) => ToolCallRecord[],
): SqliteRuns {
  const sql = prepareRunStatements(db);
  const methods: RunStore = {
    openRun: (record) =>
      write(
        constraint(`run "${record.runId}"`, () => sql.openRun.run(openRunRow(record))),
        'one',
      ),
    closeRun: (runId, close) =>
      write(() => {
        if (sql.closeRun.run(runCloseRow(runId, close)).changes === 0) {
          throw new RuntimeError('not_found', `no run "${runId}" to close`);
        }
      }, 'one'),
    getRun: (runId) =>
      read(() => {
        const row = sql.getRun.get(runId) as RunRow | undefined;
        return row === undefined ? undefined : toRunRecord(row);
      }),
    listRuns: (sessionKey) => read(() => (sql.listRuns.all(sessionKey) as RunRow[]).map(toRunRecord)),
    // Every session's runs: a corrupt one is skipped and reported, the others are served.
    listOpenRuns: () => read(() => corruptRows.readEach(sql.listOpenRuns.all() as RunRow[], toRunRecord)),
    listPausedRuns: () => read(() => corruptRows.readEach(sql.listPausedRuns.all() as RunRow[], toRunRecord)),
    setRunStatus: (runId, status, progress) =>
      write(() => {
        if (!openStatuses.has(status)) {
          throw new RuntimeError('invalid_input', `"${String(status)}" is not the status of an open run`);
        }
        if (sql.setRunStatus.run(runStatusRow(runId, status, progress)).changes === 0) {
          throw new RuntimeError('not_found', `no open run "${runId}"`, { details: { runId } });
        }
      }, 'one'),
  };
  const pausedOf = (sessionKey: string): SessionState['paused'] => {
    const row = sql.pausedRunOf.get(sessionKey) as RunRow | undefined;
    return row === undefined ? undefined : { run: toRunRecord(row), calls: latestBatch(row.run_id) };
  };
  return { methods, pausedOf };
}
