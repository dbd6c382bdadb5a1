import { RuntimeError } from '../../core/index.js';
import { openRunStatuses } from '../../core/index.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import type { PostgresAccess } from './access.js';
import type { PostgresQuery } from './queue.js';
import { gatherRows, type RowStatement } from './queue.js';
import { valuesOf } from './rows.js';
import type { SessionState } from '../contract/recovery-store.js';
import type { RunClose, RunCloseOptions, RunStore } from '../contract/run-store.js';
import {
  failedBefore,
  openRunColumns,
  openRunRow,
  runCloseColumns,
  runCloseRow,
  runStatusRow,
} from '../sql/params.js';
import { toRunRecord, type RunRow } from '../sql/rows.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';

/** The paused statuses as written in SQL (the `runs_paused` index has this very term). */
const paused = "('awaiting_approval', 'awaiting_tool_results')";
/** The statuses of a run that has not ended. */
const open = "('running', 'awaiting_approval', 'awaiting_tool_results')";
/** The statuses `setRunStatus` moves a run between. */
const openStatuses = new Set<string>(openRunStatuses);

/** Run rows, gathered from every open of a transaction into one statement (see `gatherRows`). */
const insertRunsSql: RowStatement = {
  sql: `INSERT INTO runs (${openRunColumns.join(', ')}) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
    $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::bigint[], $12::bigint[],
    $13::float8[], $14::text[], $15::text[], $16::text[])`,
  table: 'runs',
  keyed: true,
  // A run opened twice is its opener's mistake; written job by job (after a failed batch), the rows are one open's.
  refuse: (error, rows) =>
    (error as { code?: unknown }).code === '23505'
      ? new RuntimeError('invalid_input', `run "${rows[0]?.map(String).join('", "')}" is already recorded`, {
          cause: error,
        })
      : error,
};

/**
 * Close a run in `query`'s transaction: jobs run in call order, so a write the close is tied to ran before it, in
 * this transaction or one committed before. One that failed refuses the close, and its run.ended appended just after
 * it (postgres/event-writer.ts).
 */
async function closeRunIn(
  { failureOf, refusedCloses }: PostgresAccess,
  query: PostgresQuery,
  { runId, close, options }: { runId: string; close: RunClose; options: RunCloseOptions | undefined },
): Promise<void> {
  const failed = failedBefore(options?.after, failureOf);
  if (failed !== undefined) {
    refusedCloses.add(runId);
    throw failed;
  }
  await gatherRows(query, closeRunsSql, asRow(valuesOf(runCloseRow(runId, close), runCloseColumns)), [runId]);
}

/** Run closes, gathered from every close of a transaction into one statement; a run not found fails its close. */
const closeRunsSql: RowStatement = {
  sql: `UPDATE runs SET status = c.status, ended_at = c.ended_at, text = c.text, input_tokens = c.input_tokens,
      output_tokens = c.output_tokens, cost = c.cost, error_code = c.error_code, error_message = c.error_message
    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::float8[],
      $8::text[], $9::text[]) AS c(${runCloseColumns.join(', ')})
    WHERE runs.run_id = c.run_id RETURNING runs.run_id`,
  table: 'runs',
  keyed: true,
  returnsEvery: true,
  verify: (result, rows) => {
    const closed = new Set(result.rows.map((row) => row['run_id']));
    const missing = (rows[0] ?? []).find((runId) => !closed.has(runId)) as string | undefined;
    if (missing !== undefined) throw new RuntimeError('not_found', `no run "${missing}" to close`);
  },
};

// NULL progress keeps what is stored: a status change alone leaves text, usage and cost as they were.
const setStatusSql = `UPDATE runs SET status = $2, text = coalesce($3, text),
    input_tokens = coalesce($4, input_tokens), output_tokens = coalesce($5, output_tokens), cost = coalesce($6, cost)
  WHERE run_id = $1 AND status IN ${open}`;

/** One row's values as the openRunColumns of a gathered statement. */
const asRow = (values: readonly unknown[]): unknown[][] => values.map((value) => [value]);

/** The run store of the Postgres ledger, and what its recovery reads of it. */
export interface PostgresRuns {
  readonly methods: RunStore;
  /** The session's paused run (the latest started) with its latest batch (runs inside a read). */
  readonly pausedOf: (query: PostgresQuery, sessionKey: string) => Promise<SessionState['paused']>;
}

/** Create the run store on the Postgres ledger; a corrupt run is skipped (and reported) in cross-session lists. */
export function createPostgresRuns(
  access: PostgresAccess,
  corruptRows: CorruptRowLog,
  latestBatch: (query: PostgresQuery, runId: string) => Promise<ToolCallRecord[]>,
): PostgresRuns {
  const { write, read } = access;
  const list = (sql: string, values: unknown[] = []) =>
    read(async (query) => (await query<RunRow>(sql, values)).rows);
  const methods: RunStore = {
    openRun: (record) =>
      write((query) =>
        gatherRows(query, insertRunsSql, asRow(valuesOf(openRunRow(record), openRunColumns)), [record.runId]),
      ),
    closeRun: (runId, close, options) =>
      write((query) => closeRunIn(access, query, { runId, close, options })),
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
