export {
  parsePlan,
  parsePlanOptions,
  planModes,
  planOptionsSchema,
  planSchema,
  planStepSchema,
  stepIdPattern,
} from './plan-schema.js';
export type { Plan, PlanMode, PlanOptions, PlanOptionsInput, PlanStep } from './plan-schema.js';
export type { StepLookup, StepResult } from './step-result.js';
export { formatRef, parseTemplate } from './placeholder-syntax.js';
export type { PlaceholderRef, Segment, TemplatePart } from './placeholder-syntax.js';
export { findReferences, referencedSteps, resolveArgs } from './placeholders.js';
export type { ArgsResolution, UnresolvedArgs } from './placeholders.js';
export { expandStep } from './plan-expansion.js';
export type { ChildLookup, ExpandedStep, StepExpansion } from './plan-expansion.js';
export { buildPlanGraph } from './plan-graph.js';
export type { PlanGraph } from './plan-graph.js';
export { childStepId } from './step-ids.js';
export { executePlanSteps } from './plan-executor.js';
export type { PlanExecution, PlanOutcome, PlanStopStatus } from './plan-executor.js';
export { previewPlan, type StepPreview } from './plan-preview.js';
export { runStep, type StepRunContext, type StepUnit } from './step-runner.js';
export { inputTable } from './input-table.js';
export { planStepIds, rootStepId } from './step-ids.js';
export type { StepJob, StepToolRunner } from './step-jobs.js';
export { cancelledError } from './step-runner.js';
