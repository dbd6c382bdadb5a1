import { RuntimeError } from '../../core/index.js';
import type { PostgresAccess } from './access.js';
import type { PostgresQuery } from './queue.js';
import { insertSql, refuseDuplicate, valuesOf } from './rows.js';
import { toolCallRow, toolCallUpdateRow, toToolCallRecord, type ToolCallRow } from '../sql/tool-call-rows.js';
import type { ToolCallRecord, ToolCallStore } from '../contract/tool-call-store.js';

/** The tool-call methods of the Postgres ledger, and what `loadSession` reads of them. */
export interface PostgresToolCalls {
  readonly methods: ToolCallStore;
  /** The calls of a run's latest recorded turn, by position (runs inside a read). */
  readonly latestBatch: (query: PostgresQuery, runId: string) => Promise<ToolCallRecord[]>;
}

const columns = [
  'run_id',
  'turn',
  'position',
  'session_key',
  'tool_call_id',
  'tool',
  'args',
  'kind',
  'status',
  'decision',
  'remember',
  'result',
  'requested_at',
  'resolved_at',
] as const;
// NULL keeps the stored value: an update gives only what changed.
const updateSql = `UPDATE tool_calls SET status = $4, decision = coalesce($5, decision),
    remember = CASE WHEN $5::text IS NULL THEN remember ELSE $6 END,
    result = coalesce($7, result), resolved_at = coalesce($8, resolved_at),
    kind = coalesce($9, kind), requested_at = coalesce($10, requested_at)
  WHERE run_id = $1 AND turn = $2 AND position = $3`;
const latestBatchSql = `SELECT * FROM tool_calls WHERE run_id = $1
  AND turn = (SELECT max(turn) FROM tool_calls WHERE run_id = $1) ORDER BY position`;

/** Tool names from `SELECT DISTINCT tool` rows, sorted the way JavaScript sorts (the database sorts by collation). */
function toolNames(rows: readonly { tool: string }[]): string[] {
  return rows.map((row) => row.tool).sort();
}

/** Create the tool-call methods on the Postgres ledger. */
export function createPostgresToolCalls({ write, read }: PostgresAccess): PostgresToolCalls {
  return {
    latestBatch: async (query, runId) =>
      (await query<ToolCallRow>(latestBatchSql, [runId])).rows.map(toToolCallRecord),
    methods: {
      // One savepoint for the batch: a duplicate key rolls back the calls inserted before it.
      putToolCalls: (records) =>
        write(async (query) => {
          for (const record of records) {
            const key = `tool call ("${record.runId}", ${record.turn}, ${record.position})`;
            await refuseDuplicate(
              key,
              query(insertSql('tool_calls', columns), valuesOf(toolCallRow(record), columns)),
            );
          }
        }),
      updateToolCall: (key, update) =>
        write(async (query) => {
          const row = toolCallUpdateRow(key, update);
          const where = [row.run_id, row.turn, row.position];
          const values = [...where, row.status, row.decision, row.remember, row.result, row.resolved_at];
          if ((await query(updateSql, [...values, row.kind, row.requested_at])).rowCount === 0) {
            throw new RuntimeError(
              'not_found',
              `no tool call ("${key.runId}", ${key.turn}, ${key.position}) to update`,
              { details: { ...key } },
            );
          }
        }),
      listToolCalls: (runId) =>
        read(async (query) =>
          (
            await query<ToolCallRow>('SELECT * FROM tool_calls WHERE run_id = $1 ORDER BY turn, position', [
              runId,
            ])
          ).rows.map(toToolCallRecord),
        ),
      rememberedTools: (sessionKey, runId) =>
        read(async (query) => ({
          run: toolNames(
            (
              await query<{ tool: string }>(
                "SELECT DISTINCT tool FROM tool_calls WHERE run_id = $1 AND remember = 'run'",
                [runId],
              )
            ).rows,
          ),
          session: toolNames(
            (
              await query<{ tool: string }>(
                "SELECT DISTINCT tool FROM tool_calls WHERE session_key = $1 AND remember = 'session'",
                [sessionKey],
              )
            ).rows,
          ),
        })),
    },
  };
}
