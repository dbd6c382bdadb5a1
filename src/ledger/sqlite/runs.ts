import { RuntimeError } from '../../core/index.js';
import { openRunStatuses } from '../../core/index.js';
import type { SessionState } from '../contract/recovery-store.js';
import type { RunStore } from '../contract/run-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import {
  failedBefore,
  openRunColumns,
  openRunRow,
  runCloseColumns,
  runCloseRow,
  runStatusRow,
} from '../sql/params.js';
import { constraint, toRunRecord, type RunRow } from '../sql/rows.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';
import { statementsByRows, valueTuples, type RowBatchKind } from './row-batches.js';

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

type OpenRow = ReturnType<typeof openRunRow>;
/** A close's row, with the writes it must not commit without (`RunCloseOptions.after`). */
type CloseRow = ReturnType<typeof runCloseRow> & { readonly after?: readonly Promise<void>[] | undefined };
/** A run's opening and its close share this key: a close goes in after the opening it was called after. */
const runKey = (row: { run_id: string }): string => row.run_id;

/** Runs opened, inserted together (a run id already recorded fails its own write alone). */
function openKind(db: SqliteAccess['db']): RowBatchKind<OpenRow> {
  const many = statementsByRows(
    db,
    (rows) =>
      `INSERT INTO runs (${openRunColumns.join(', ')}) VALUES ${valueTuples(rows, openRunColumns.length)}`,
  );
  const values = (row: OpenRow) => openRunColumns.map((column) => row[column]);
  return {
    phase: 'insert',
    key: runKey,
    writeMany: (rows) => many(rows.length).run(rows.flatMap(values)).changes === rows.length,
    writeOne: (row) => constraint(`run "${row.run_id}"`, () => many(1).run(values(row)))(),
  };
}

/**
 * Runs closed, updated together; a close of a run that is not there fails its own write (`not_found`), and one
 * written after a write it is tied to failed (its run's opening refused, a turn) fails with that write's error.
 */
function closeKind({ db, failureOf, refusedCloses }: SqliteAccess): RowBatchKind<CloseRow> {
  const set = runCloseColumns
    .slice(1)
    .map((column, index) => `${column} = v.column${index + 2}`)
    .join(', ');
  const many = statementsByRows(
    db,
    (rows) =>
      `UPDATE runs SET ${set} FROM (VALUES ${valueTuples(rows, runCloseColumns.length)}) AS v
       WHERE runs.run_id = v.column1`,
  );
  const values = (row: CloseRow) => runCloseColumns.map((column) => row[column]);
  return {
    phase: 'update',
    key: runKey,
    writeMany: (rows) => many(rows.length).run(rows.flatMap(values)).changes === rows.length,
    writeOne: (row) => {
      if (many(1).run(values(row)).changes === 0) {
        throw new RuntimeError('not_found', `no run "${row.run_id}" to close`);
      }
    },
    // Inserts (its opening, its turns) and the updates of earlier kinds are written first: their failures are known.
    // Its run.ended, buffered after it, is refused with it (event rows go in after these rows).
    blockedBy: (row) => {
      const failed = failedBefore(row.after, failureOf);
      if (failed !== undefined) refusedCloses.add(row.run_id);
      return failed;
    },
  };
}

function prepareRunStatements(db: SqliteAccess['db']) {
  const prepare = (sql: string) => db.prepare(sql);
  return {
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
  access: SqliteAccess,
  corruptRows: CorruptRowLog,
  latestBatch: (runId: string) => ToolCallRecord[],
): SqliteRuns {
  const { db, write, batched, read } = access;
  const sql = prepareRunStatements(db);
  const openRuns = batched(openKind(db));
  const closeRuns = batched(closeKind(access));
  const methods: RunStore = {
    openRun: (record) => openRuns([openRunRow(record)]),
    closeRun: (runId, close, options) => closeRuns([{ ...runCloseRow(runId, close), after: options?.after }]),
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
