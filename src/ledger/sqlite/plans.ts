import type Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';
import {
  planRow,
  stepResultRow,
  toApprovedSteps,
  toPlanRecord,
  toStepResultRecord,
  type PlanRow,
  type StepResultRow,
} from '../sql/plan-rows.js';
import { withApproved, type PlanStore } from '../contract/plan-store.js';
import { constraint } from '../sql/rows.js';
import type { SqliteAccess } from './access.js';

function preparePlanStatements(db: Database.Database) {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  return {
    putPlan: prepare(
      `INSERT INTO plans (run_id, session_key, plan, options, approved_steps, created_at)
       VALUES (@run_id, @session_key, @plan, @options, @approved_steps, @created_at)`,
    ),
    getPlan: prepare('SELECT * FROM plans WHERE run_id = ?'),
    approvedSteps: prepare('SELECT approved_steps FROM plans WHERE run_id = ?'),
    setApprovedSteps: prepare('UPDATE plans SET approved_steps = ? WHERE run_id = ?'),
    // Both keys refuse a duplicate: the primary key (run_id, step_id) and the unique index on (run_id, seq).
    putStepResult: prepare(
      `INSERT INTO plan_steps (run_id, step_id, seq, success, data, error_code, error_message, execution_time,
         retries, started_at, recorded_at)
       VALUES (@run_id, @step_id, @seq, @success, @data, @error_code, @error_message, @execution_time,
         @retries, @started_at, @recorded_at)`,
    ),
    listStepResults: prepare('SELECT * FROM plan_steps WHERE run_id = ? ORDER BY seq'),
  };
}

/** Create the plan-run methods on the SQLite ledger's connection (its schema is already migrated). */
export function createSqlitePlans({ db, write, read }: SqliteAccess): PlanStore {
  const sql = preparePlanStatements(db);
  return {
    putPlan: (record) =>
      write(
        constraint(`plan of run "${record.runId}"`, () => sql.putPlan.run(planRow(record))),
        'one',
      ),
    getPlan: (runId) =>
      read(() => {
        const row = sql.getPlan.get(runId) as PlanRow | undefined;
        return row === undefined ? undefined : toPlanRecord(row);
      }),
    // Read, merge, write back: one statement writes, and it runs in the transaction the read saw.
    approvePlanSteps: (runId, stepIds) =>
      write(() => {
        const row = sql.approvedSteps.get(runId) as { approved_steps: string } | undefined;
        if (row === undefined) {
          throw new RuntimeError('not_found', `no plan of run "${runId}" to approve steps of`, {
            details: { runId },
          });
        }
        const approved = toApprovedSteps(runId, row.approved_steps);
        const merged = withApproved(approved, stepIds);
        if (merged.length > approved.length) sql.setApprovedSteps.run(JSON.stringify(merged), runId);
      }, 'one'),
    // The hot path (one call per finished step): one prepared INSERT, no savepoint.
    putStepResult: (record) =>
      write(
        constraint(`step result ("${record.runId}", "${record.stepId}", ${record.seq})`, () =>
          sql.putStepResult.run(stepResultRow(record)),
        ),
        'one',
      ),
    listStepResults: (runId) =>
      read(() => (sql.listStepResults.all(runId) as StepResultRow[]).map(toStepResultRecord)),
  };
}
