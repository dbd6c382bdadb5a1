import type Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';
import type { CompensationStore } from '../contract/compensation-store.js';
import type { SqliteAccess } from './access.js';
import { constraint } from '../sql/rows.js';
import {
  compensationRow,
  compensationUpdateRow,
  toCompensationRecord,
  type CompensationRow,
} from '../sql/tool-call-rows.js';

function prepareCompensationStatements(db: Database.Database) {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  return {
    appendCompensation: prepare(
      `INSERT INTO compensations (run_id, seq, session_key, tool_call_id, tool, args, result, status, error_code,
         error_message, recorded_at, undone_at)
       VALUES (@run_id, @seq, @session_key, @tool_call_id, @tool, @args, @result, @status, @error_code,
         @error_message, @recorded_at, @undone_at)`,
    ),
    updateCompensation: prepare(
      `UPDATE compensations SET status = @status, error_code = @error_code, error_message = @error_message,
         undone_at = @undone_at
       WHERE run_id = @run_id AND seq = @seq`,
    ),
    listCompensations: prepare('SELECT * FROM compensations WHERE run_id = ? ORDER BY seq'),
  };
}

/** Create the compensation store on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteCompensations({ db, write, read }: SqliteAccess): CompensationStore {
  const sql = prepareCompensationStatements(db);
  return {
    appendCompensation: (record) =>
      write(
        constraint(`compensation ("${record.runId}", ${record.seq})`, () =>
          sql.appendCompensation.run(compensationRow(record)),
        ),
      ),
    updateCompensation: (runId, seq, update) =>
      write(() => {
        if (sql.updateCompensation.run(compensationUpdateRow(runId, seq, update)).changes === 0) {
          throw new RuntimeError('not_found', `no compensation ("${runId}", ${seq}) to update`, {
            details: { runId, seq },
          });
        }
      }, 'one'),
    listCompensations: (runId) =>
      read(() => (sql.listCompensations.all(runId) as CompensationRow[]).map(toCompensationRecord)),
  };
}
