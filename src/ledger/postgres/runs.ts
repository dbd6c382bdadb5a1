import { RuntimeError } from '../../core/index.js';
import { openRunStatuses } from '../../core/index.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import type { PostgresAccess } from './access.js';
import type { PostgresQuery } from './queue.js';
import { insertSql, refuseDuplicate, valuesOf } from './rows.js';
import type { SessionState } from '../contract/recovery-store.js';
import type { RunStore } from '../contract/run-store.js';
import { openRunRow, runCloseRow, runStatusRow } from '../sql/params.js';
import { toRunRecord, type RunRow } from '../sql/rows.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';

/** The paused statuses as written in SQL (the `runs_paused` index has this very term). */
const paused = "('awaiting_approval', 'awaiting_tool_results')";
/** The statuses of a run that has not ended. */
const open = "('running', 'awaiting_approval', 'awaiting_tool_results')";
/** The statuses `setRunStatus` moves a run between. */
const openStatuses = new Set<string>(openRunStatuses);

const columns = [
  'run_id',
  'session_key',
  'status',
  'message_ids',
  'provider',
  'model',
  'started_at',
  'ended_at',
  'error_code',
  'error_message',
  'input_tokens',
  'output_tokens',
  'cost',
  'text',
  'parent_run_id',
  'parent_call_id',
] as const;

const closeSql = `UPDATE runs SET status = $2, ended_at = $3, text = $4, input_tokens = $5, output_tokens = $6,
    cost = $7, error_code = $8, error_message = $9
  WHERE run_id = $1`;
// NULL progress keeps what is stored: a status change alone leaves text, usage and cost as they were.
const setStatusSql = `UPDATE runs SET status = $2, text = coalesce($3, text),
    input_tokens = coalesce($4, input_tokens), output_tokens = coalesce($5, output_tokens), cost = coalesce($6, cost)
  WHERE run_id = $1 AND status IN ${open}`;

/** The run store of the Postgres ledger, and what its recovery reads of it. */
export interface PostgresRuns {
  readonly methods: RunStore;
  /** The session's paused run (the latest started) with its latest batch (runs inside a read). */
  readonly pausedOf: (query: PostgresQuery, sessionKey: string) => Promise<SessionState['paused']>;
}

/** Create the run store on the Postgres ledger; a corrupt run is skipped (and reported) in cross-session lists. */
export function createPostgresRuns(
  { write, read }: PostgresAccess,
  corruptRows: CorruptRowLog,
  latestBatch: (query: PostgresQuery, runId: string) => Promise<ToolCallRecord[]>,
): PostgresRuns {
  const list = (sql: string, values: unknown[] = []) =>
    read(async (query) => (await query<RunRow>(sql, values)).rows);
  const methods: RunStore = {
    openRun: (record) =>
      write(async (query) => {
        const values = valuesOf(openRunRow(record), columns);
        await refuseDuplicate(`run "${record.runId}"`, query(insertSql('runs', columns), values));
      }),
    closeRun: (runId, close) =>
      write(async (query) => {
        const row = runCloseRow(runId, close);
        const values = [runId, row.status, row.ended_at, row.text, row.input_tokens, row.output_tokens];
        const { rowCount } = await query(closeSql, [...values, row.cost, row.error_code, row.error_message]);
        if (rowCount === 0) throw new RuntimeError('not_found', `no run "${runId}" to close`);
      }),
    getRun: async (runId) => {
      const [row] = await list('SELECT * FROM runs WHERE run_id = $1', [runId]);
      return row === undefined ? undefined : toRunRecord(row);
    },
    listRuns: async (sessionKey) =>
      (await list('SELECT * FROM runs WHERE session_key = $1 ORDER BY id', [sessionKey])).map(toRunRecord),
    listOpenRuns: async () =>
      corruptRows.readEach(
        await list("SELECT * FROM runs WHERE status = 'running' ORDER BY id"),
        toRunRecord,
      ),
    listPausedRuns: async () =>
      corruptRows.readEach(
        await list(`SELECT * FROM runs WHERE status IN ${paused} ORDER BY id`),
        toRunRecord,
      ),
    setRunStatus: (runId, status, progress) =>
      write(async (query) => {
        if (!openStatuses.has(status)) {
          throw new RuntimeError('invalid_input', `"${String(status)}" is not the status of an open run`);
        }
        const row = runStatusRow(runId, status, progress);
        const values = [runId, status, row.text, row.input_tokens, row.output_tokens, row.cost];
        if ((await query(setStatusSql, values)).rowCount === 0) {
          throw new RuntimeError('not_found', `no open run "${runId}"`, { details: { runId } });
        }
      }),
  };
  const pausedOf = async (query: PostgresQuery, sessionKey: string): Promise<SessionState['paused']> => {
    const { rows } = await query<RunRow>(
      `SELECT * FROM runs WHERE session_key = $1 AND status IN ${paused} ORDER BY id DESC LIMIT 1`,
      [sessionKey],
    );
    const row = rows[0];
    return row === undefined
      ? undefined
      : { run: toRunRecord(row), calls: await latestBatch(query, row.run_id) };
  };
  return { methods, pausedOf };
}
