import { RuntimeError } from '../../core/index.js';
import type { CompensationStore } from '../contract/compensation-store.js';
import type { PostgresAccess } from './access.js';
import { insertSql, refuseDuplicate, valuesOf } from './rows.js';
import {
  compensationRow,
  compensationUpdateRow,
  toCompensationRecord,
  type CompensationRow,
} from '../sql/tool-call-rows.js';

const columns = [
  'run_id',
  'seq',
  'session_key',
  'tool_call_id',
  'tool',
  'args',
  'result',
  'status',
  'error_code',
  'error_message',
  'recorded_at',
  'undone_at',
] as const;
const updateSql = `UPDATE compensations SET status = $3, error_code = $4, error_message = $5, undone_at = $6
  WHERE run_id = $1 AND seq = $2`;

/** Create the compensation store on the Postgres ledger. */
export function createPostgresCompensations({ write, read }: PostgresAccess): CompensationStore {
  return {
    appendCompensation: (record) =>
      write(async (query) => {
        const values = valuesOf(compensationRow(record), columns);
        await refuseDuplicate(
          `compensation ("${record.runId}", ${record.seq})`,
          query(insertSql('compensations', columns), values),
        );
      }),
    updateCompensation: (runId, seq, update) =>
      write(async (query) => {
        const row = compensationUpdateRow(runId, seq, update);
        const values = [runId, seq, row.status, row.error_code, row.error_message, row.undone_at];
        if ((await query(updateSql, values)).rowCount === 0) {
          throw new RuntimeError('not_found', `no compensation ("${runId}", ${seq}) to update`, {
            details: { runId, seq },
          });
        }
      }),
    listCompensations: (runId) =>
      read(async (query) =>
        (
          await query<CompensationRow>('SELECT * FROM compensations WHERE run_id = $1 ORDER BY seq', [runId])
        ).rows.map(toCompensationRecord),
      ),
  };
}
