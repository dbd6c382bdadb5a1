import { errorCodes, type ErrorCode } from '../../core/index.js';
import type { PlanRecord, StepResultRecord } from '../contract/plan-store.js';
import { corrupt, parseJson } from './rows.js';

/** Raw rows of `plans` and `plan_steps`, as better-sqlite3 returns them. */
export interface PlanRow {
  run_id: string;
  session_key: string;
  plan: string;
  options: string;
  approved_steps: string;
  created_at: number;
}
export interface StepResultRow {
  run_id: string;
  step_id: string;
  seq: number;
  success: number;
  data: string | null;
  error_code: string | null;
  error_message: string | null;
  execution_time: number;
  retries: number;
  started_at: number;
  recorded_at: number;
}

const knownErrorCodes = new Set<string>(errorCodes);

export function planRow(record: PlanRecord) {
  return {
    run_id: record.runId,
    session_key: record.sessionKey,
    // `undefined` has no JSON; stored as null rather than tripping the NOT NULL column.
    plan: JSON.stringify(record.plan) ?? 'null',
    options: JSON.stringify(record.options) ?? 'null',
    approved_steps: JSON.stringify(record.approvedSteps),
    created_at: record.createdAt,
  };
}

/** A plan's approved step ids as stored; anything but a list of strings is a corrupt row. */
export function toApprovedSteps(runId: string, text: string): string[] {
  const approved = parseJson('plans', `"${runId}"`, 'approved_steps', text);
  if (!Array.isArray(approved) || !approved.every((stepId) => typeof stepId === 'string')) {
    throw corrupt('plans', `"${runId}"`, 'approved_steps is not a list of step ids');
  }
  return approved;
}

export function toPlanRecord(row: PlanRow): PlanRecord {
  const name = `"${row.run_id}"`;
  return {
    runId: row.run_id,
    sessionKey: row.session_key,
    plan: parseJson('plans', name, 'plan', row.plan),
    options: parseJson('plans', name, 'options', row.options),
    approvedSteps: toApprovedSteps(row.run_id, row.approved_steps),
    createdAt: row.created_at,
  };
}

/** Statement parameters of a step result: absent data is NULL, so a `null` result (the text 'null') stays apart. */
export function stepResultRow(record: StepResultRecord) {
  return {
    run_id: record.runId,
    step_id: record.stepId,
    seq: record.seq,
    success: record.success ? 1 : 0,
    data: record.data === undefined ? null : (JSON.stringify(record.data) ?? null),
    error_code: record.error?.code ?? null,
    error_message: record.error?.message ?? null,
    execution_time: record.metadata.executionTime,
    retries: record.metadata.retries,
    started_at: record.metadata.startedAt,
    recorded_at: record.recordedAt,
  };
}

export function toStepResultRecord(row: StepResultRow): StepResultRecord {
  const name = `("${row.run_id}", "${row.step_id}")`;
  if (row.success !== 0 && row.success !== 1) {
    throw corrupt('plan_steps', name, `success is ${String(row.success)}, not 0 or 1`);
  }
  if (row.error_code !== null && !knownErrorCodes.has(row.error_code)) {
    throw corrupt('plan_steps', name, `unknown error code "${row.error_code}"`);
  }
  return {
    runId: row.run_id,
    stepId: row.step_id,
    seq: row.seq,
    success: row.success === 1,
    ...(row.data === null ? {} : { data: parseJson('plan_steps', name, 'data', row.data) }),
    ...(row.error_code === null
      ? {}
      : { error: { code: row.error_code as ErrorCode, message: row.error_message ?? '' } }),
    metadata: { executionTime: row.execution_time, retries: row.retries, startedAt: row.started_at },
    recordedAt: row.recorded_at,
  };
}
