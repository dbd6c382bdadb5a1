import { RuntimeError } from '../../core/index.js';
import type { Perform } from './perform.js';
import {
  withApproved,
  type PlanRecord,
  type PlanStore,
  type StepResultRecord,
} from '../contract/plan-store.js';

/** A plan run's step results by `seq`, and the step ids and seqs taken (so a duplicate is found at once). */
interface RunSteps {
  readonly results: StepResultRecord[];
  readonly stepIds: Set<string>;
  readonly seqs: Set<number>;
}

function copyPlan(record: PlanRecord): PlanRecord {
  return {
    runId: record.runId,
    sessionKey: record.sessionKey,
    plan: structuredClone(record.plan),
    options: structuredClone(record.options),
    approvedSteps: [...record.approvedSteps],
    createdAt: record.createdAt,
  };
}

/**
 * Copy field by field, as SQLite stores it: `data: undefined` is no data, and an error keeps only its code and
 * message (an Error instance passed as ErrorInfo would lose its `code` to structuredClone).
 */
function copyStepResult(record: StepResultRecord): StepResultRecord {
  const { metadata, error } = record;
  return {
    runId: record.runId,
    stepId: record.stepId,
    seq: record.seq,
    success: record.success,
    ...(record.data === undefined ? {} : { data: structuredClone(record.data) }),
    ...(error === undefined ? {} : { error: { code: error.code, message: error.message } }),
    metadata: {
      executionTime: metadata.executionTime,
      retries: metadata.retries,
      startedAt: metadata.startedAt,
    },
    recordedAt: record.recordedAt,
  };
}

/**
 * Keep plan runs in memory: plans by run, and each run's step results by `seq`. Records are copied on the way
 * in and on the way out (plans, options and step data are arbitrary data).
 */
export function createMemoryPlans(perform: Perform): PlanStore {
  const plans = new Map<string, PlanRecord>();
  const stepsByRun = new Map<string, RunSteps>();

  return {
    putPlan: (record) =>
      perform(() => {
        if (plans.has(record.runId)) {
          throw new RuntimeError('invalid_input', `plan of run "${record.runId}" is already recorded`, {
            details: { runId: record.runId },
          });
        }
        plans.set(record.runId, copyPlan(record));
      }),

    getPlan: (runId) =>
      perform(() => {
        const stored = plans.get(runId);
        return stored && copyPlan(stored);
      }),

    approvePlanSteps: (runId, stepIds) =>
      perform(() => {
        const stored = plans.get(runId);
        if (stored === undefined) {
          throw new RuntimeError('not_found', `no plan of run "${runId}" to approve steps of`, {
            details: { runId },
          });
        }
        plans.set(runId, { ...stored, approvedSteps: withApproved(stored.approvedSteps, stepIds) });
      }),

    putStepResult: (record) =>
      perform(() => {
        let steps = stepsByRun.get(record.runId);
        if (steps?.stepIds.has(record.stepId) === true || steps?.seqs.has(record.seq) === true) {
          throw new RuntimeError(
            'invalid_input',
            `step result ("${record.runId}", "${record.stepId}", ${record.seq}) is already recorded`,
            { details: { runId: record.runId, stepId: record.stepId, seq: record.seq } },
          );
        }
        if (steps === undefined) {
          steps = { results: [], stepIds: new Set(), seqs: new Set() };
          stepsByRun.set(record.runId, steps);
        }
        // Results come in seq order, so the place is found at the end in one step.
        const { results } = steps;
        let index = results.length;
        while (index > 0 && (results[index - 1] as StepResultRecord).seq > record.seq) index--;
        results.splice(index, 0, copyStepResult(record));
        steps.stepIds.add(record.stepId);
        steps.seqs.add(record.seq);
      }),

    listStepResults: (runId) => perform(() => (stepsByRun.get(runId)?.results ?? []).map(copyStepResult)),
  };
}
