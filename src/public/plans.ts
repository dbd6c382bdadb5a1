/**
 * `agentlanes/plans`: plans, a DAG of tool calls a session runs without the model (`session.executePlan`,
 * `session.approvePlan`): their schemas, modes and options, what a step resolves to, and a plan's preview.
 */
export {
  planSchema,
  planOptionsSchema,
  planModes,
  type Plan,
  type PlanStep,
  type PlanMode,
  type PlanOptions,
  type PlanOptionsInput,
  type StepResult,
  type StepPreview,
} from '../plans/index.js';
export type { PlanInput, PlanRunResult, ApprovePlanInput } from '../runtime/index.js';
