import type Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';
import { constraint } from '../sql/rows.js';
import type { SqliteAccess } from './access.js';
import { toolCallRow, toolCallUpdateRow, toToolCallRecord, type ToolCallRow } from '../sql/tool-call-rows.js';
import type { ToolCallRecord, ToolCallStore } from '../contract/tool-call-store.js';

/** The tool-call methods of the SQLite ledger, and what `loadSession` reads of them. */
export interface SqliteToolCalls {
  readonly methods: ToolCallStore;
  /** The calls of a run's latest recorded turn, by position (synchronous: `loadSession` runs it in a read). */
  readonly latestBatch: (runId: string) => ToolCallRecord[];
}

function prepareToolCallStatements(db: Database.Database) {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  return {
    putToolCall: prepare(
      `INSERT INTO tool_calls (run_id, turn, position, session_key, tool_call_id, tool, args, kind, status, decision,
         remember, result, requested_at, resolved_at)
       VALUES (@run_id, @turn, @position, @session_key, @tool_call_id, @tool, @args, @kind, @status, @decision,
         @remember, @result, @requested_at, @resolved_at)`,
    ),
    // NULL keeps the stored value: an update gives only what changed.
    updateToolCall: prepare(
      `UPDATE tool_calls SET status = @status, decision = coalesce(@decision, decision),
         remember = CASE WHEN @decision IS NULL THEN remember ELSE @remember END,
         result = coalesce(@result, result), resolved_at = coalesce(@resolved_at, resolved_at),
         kind = coalesce(@kind, kind), requested_at = coalesce(@requested_at, requested_at)
       WHERE run_id = @run_id AND turn = @turn AND position = @position`,
    ),
    listToolCalls: prepare('SELECT * FROM tool_calls WHERE run_id = ? ORDER BY turn, position'),
    latestBatch: prepare(
      `SELECT * FROM tool_calls WHERE run_id = @run_id
         AND turn = (SELECT max(turn) FROM tool_calls WHERE run_id = @run_id) ORDER BY position`,
    ),
    rememberedInRun: prepare(
      "SELECT DISTINCT tool FROM tool_calls WHERE run_id = ? AND remember = 'run' ORDER BY tool",
    ),
    rememberedInSession: prepare(
      "SELECT DISTINCT tool FROM tool_calls WHERE session_key = ? AND remember = 'session' ORDER BY tool",
    ),
  };
}

/** Tool names from `SELECT DISTINCT tool` rows, sorted the way JavaScript sorts (SQLite sorts by bytes). */
function toolNames(rows: unknown[]): string[] {
  return (rows as { tool: string }[]).map((row) => row.tool).sort();
}

/** Create the tool-call methods on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteToolCalls({ db, write, read }: SqliteAccess): SqliteToolCalls {
  const sql = prepareToolCallStatements(db);
  return {
    latestBatch: (runId) => (sql.latestBatch.all({ run_id: runId }) as ToolCallRow[]).map(toToolCallRecord),
    methods: {
      // One savepoint for the batch: a duplicate key rolls back the calls inserted before it.
      putToolCalls: (records) =>
        write(
          () => {
            for (const record of records) {
              const key = `tool call ("${record.runId}", ${record.turn}, ${record.position})`;
              constraint(key, () => sql.putToolCall.run(toolCallRow(record)))();
            }
          },
          records.length === 1 ? 'one' : 'many',
        ),
      updateToolCall: (key, update) =>
        write(() => {
          if (sql.updateToolCall.run(toolCallUpdateRow(key, update)).changes === 0) {
            throw new RuntimeError(
              'not_found',
              `no tool call ("${key.runId}", ${key.turn}, ${key.position}) to update`,
              { details: { ...key } },
            );
          }
        }, 'one'),
      listToolCalls: (runId) =>
        read(() => (sql.listToolCalls.all(runId) as ToolCallRow[]).map(toToolCallRecord)),
      rememberedTools: (sessionKey, runId) =>
        read(() => ({
          run: toolNames(sql.rememberedInRun.all(runId)),
          session: toolNames(sql.rememberedInSession.all(sessionKey)),
        })),
    },
  };
}
