import { RuntimeError } from '../../core/index.js';
import { withApproved, type PlanStore } from '../contract/plan-store.js';
import type { PostgresAccess } from './access.js';
import { insertSql, refuseDuplicate, valuesOf } from './rows.js';
import {
  planRow,
  stepResultRow,
  toApprovedSteps,
  toPlanRecord,
  toStepResultRecord,
  type PlanRow,
  type StepResultRow,
} from '../sql/plan-rows.js';

const planColumns = ['run_id', 'session_key', 'plan', 'options', 'approved_steps', 'created_at'] as const;
const stepColumns = [
  'run_id',
  'step_id',
  'seq',
  'success',
  'data',
  'error_code',
  'error_message',
  'execution_time',
  'retries',
  'started_at',
  'recorded_at',
] as const;

/** Create the plan-run methods on the Postgres ledger. */
export function createPostgresPlans({ write, read }: PostgresAccess): PlanStore {
  return {
    putPlan: (record) =>
      write(async (query) => {
        const values = valuesOf(planRow(record), planColumns);
        await refuseDuplicate(
          `plan of run "${record.runId}"`,
          query(insertSql('plans', planColumns), values),
        );
      }),
    getPlan: (runId) =>
      read(async (query) => {
        const { rows } = await query<PlanRow>('SELECT * FROM plans WHERE run_id = $1', [runId]);
        return rows[0] === undefined ? undefined : toPlanRecord(rows[0]);
      }),
    // Read (locking the row), merge, write back, in one transaction: a concurrent approval waits for this one.
    approvePlanSteps: (runId, stepIds) =>
      write(async (query) => {
        const { rows } = await query<{ approved_steps: string }>(
          'SELECT approved_steps FROM plans WHERE run_id = $1 FOR UPDATE',
          [runId],
        );
        const row = rows[0];
        if (row === undefined) {
          throw new RuntimeError('not_found', `no plan of run "${runId}" to approve steps of`, {
            details: { runId },
          });
        }
        const approved = toApprovedSteps(runId, row.approved_steps);
        const merged = withApproved(approved, stepIds);
        if (merged.length > approved.length) {
          await query('UPDATE plans SET approved_steps = $1 WHERE run_id = $2', [
            JSON.stringify(merged),
            runId,
          ]);
        }
      }),
    // Both keys refuse a duplicate: the primary key (run_id, step_id) and the unique (run_id, seq).
    putStepResult: (record) =>
      write(async (query) => {
        const values = valuesOf(stepResultRow(record), stepColumns);
        await refuseDuplicate(
          `step result ("${record.runId}", "${record.stepId}", ${record.seq})`,
          query(insertSql('plan_steps', stepColumns), values),
        );
      }),
    listStepResults: (runId) =>
      read(async (query) =>
        (
          await query<StepResultRow>('SELECT * FROM plan_steps WHERE run_id = $1 ORDER BY seq', [runId])
        ).rows.map(toStepResultRecord),
      ),
  };
}
