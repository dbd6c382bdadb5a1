import type { ErrorInfo } from '../../core/index.js';

/**
 * A plan run's definition as submitted: the plan and its options (opaque JSON here; the plan executor validates
 * them), and the step ids an operator approved so far (in the order they were first approved).
 */
export interface PlanRecord {
  readonly runId: string;
  readonly sessionKey: string;
  readonly plan: unknown;
  readonly options: unknown;
  readonly approvedSteps: readonly string[];
  readonly createdAt: number;
}

/** What a finished step took: its run time, retries and start. */
export interface StepMetadata {
  readonly executionTime: number;
  readonly retries: number;
  readonly startedAt: number;
}

/**
 * The result of one executed step of a plan run (a plan step, or a child of an expanded one), recorded once it
 * finished so a resumed plan never runs it again. `seq` orders a run's results as they were recorded (from 1).
 */
export interface StepResultRecord {
  readonly runId: string;
  readonly stepId: string;
  readonly seq: number;
  readonly success: boolean;
  readonly data?: unknown;
  readonly error?: ErrorInfo;
  readonly metadata: StepMetadata;
  readonly recordedAt: number;
}

/** Where plan runs' definitions and step results are kept, so a resumed plan never runs a step again. */
export interface PlanStore {
  /** Record a plan run's definition; a run that already has one is refused (`invalid_input`). */
  putPlan(record: PlanRecord): Promise<void>;
  /** The plan run's definition; undefined when there is none. */
  getPlan(runId: string): Promise<PlanRecord | undefined>;
  /** Add step ids to a plan's approved list (ids already there keep their place); `not_found` without a plan. */
  approvePlanSteps(runId: string, stepIds: readonly string[]): Promise<void>;
  /** Record a finished step; a `(runId, stepId)` or `(runId, seq)` already recorded is refused (`invalid_input`). */
  putStepResult(record: StepResultRecord): Promise<void>;
  /** A plan run's step results by `seq`. */
  listStepResults(runId: string): Promise<StepResultRecord[]>;
}

/** `approved` with the ids of `stepIds` it lacks appended, in their order (duplicates among them once). */
export function withApproved(approved: readonly string[], stepIds: readonly string[]): string[] {
  const merged = [...approved];
  const seen = new Set(approved);
  for (const stepId of stepIds) {
    if (seen.has(stepId)) continue;
    seen.add(stepId);
    merged.push(stepId);
  }
  return merged;
}
