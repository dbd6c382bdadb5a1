import { z } from 'zod';
import type { LiveSession } from './session-registry.js';
import { RuntimeError, isRuntimeError, assertInputBounds } from '../core/index.js';
import {
  buildPlanGraph,
  parsePlan,
  parsePlanOptions,
  type Plan,
  type PlanOptions,
  planStepIds,
  rootStepId,
} from '../plans/index.js';
import type { PlanRecord } from '../ledger/index.js';
import { assertPlanStepIds, type PlanRunResult, resumePlanRun, startPlanRun } from '../runner/index.js';
import { sessionScopeOf, type RuntimeInternals } from './runtime-internals.js';

/**
 * `session.executePlan`: validate the plan (a cycle or a dangling dependency is refused before anything runs),
 * then run it as a run of the session (its machine runs one at a time). `preview` only resolves and validates.
 */
export async function executePlan(
  internals: RuntimeInternals,
  session: LiveSession,
  planInput: unknown,
  optionsInput: unknown,
): Promise<PlanRunResult> {
  const plan = parsePlan(planInput);
  const options = parsePlanOptions(optionsInput);
  const graph = buildPlanGraph(plan);
  const runId = internals.services.ids('run');
  return startPlanRun(sessionScopeOf(internals, session), { runId, plan, graph, options });
}

const approvePlanSchema = z
  .object({
    runId: z.string().min(1),
    stepIds: z.array(z.string().min(1)).default([]),
    reject: z.array(z.string().min(1)).default([]),
    // The outcome the operator knows of a step in doubt (a crash cut it while its tool ran): its result.
    supply: z.array(z.object({ stepId: z.string().min(1), output: z.unknown() }).strict()).default([]),
  })
  .strict()
  .refine(
    (input) => input.stepIds.length + input.reject.length + input.supply.length > 0,
    'name at least one step to approve, reject or supply',
  )
  .refine((input) => {
    const named = [...input.stepIds, ...input.reject, ...input.supply.map((entry) => entry.stepId)];
    return new Set(named).size === named.length;
  }, 'a step can be approved, rejected or supplied once');

/** What `approvePlan()` takes: the paused plan run, the step ids approved and those rejected. */
export type ApprovePlanInput = z.input<typeof approvePlanSchema>;

/** The plan and options of a recorded plan run; a record that no longer parses is `ledger_corrupt`. */
function recordedPlan(record: PlanRecord): { plan: Plan; options: PlanOptions } {
  try {
    return { plan: parsePlan(record.plan), options: parsePlanOptions(record.options) };
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    throw new RuntimeError('ledger_corrupt', `plans row "${record.runId}": ${error.message}`, {
      details: { table: 'plans', row: record.runId },
    });
  }
}

/**
 * `session.approvePlan`: approve (and reject) steps of a plan run that waits, then resume it where it stopped.
 * Completed steps never run again; rejected ones fail with `cancelled` and block what depends on them.
 */
export async function approvePlan(
  internals: RuntimeInternals,
  session: LiveSession,
  input: ApprovePlanInput,
): Promise<PlanRunResult> {
  assertInputBounds('approvePlan', input, 'approvePlan');
  const parsed = approvePlanSchema.safeParse(input);
  if (!parsed.success)
    throw new RuntimeError('invalid_input', `approvePlan: ${z.prettifyError(parsed.error)}`);
  const { runId, stepIds, reject, supply } = parsed.data;
  const { ledger } = internals.services;
  const [record, run] = await Promise.all([ledger.getPlan(runId), ledger.getRun(runId)]);
  if (record === undefined || run === undefined || record.sessionKey !== session.key) {
    throw new RuntimeError('not_found', `approvePlan: session "${session.key}" has no plan run "${runId}"`);
  }
  if (run.status !== 'awaiting_approval' || internals.work.resumingPlans.has(runId)) {
    throw new RuntimeError('invalid_input', `approvePlan: plan run "${runId}" is not waiting for approval`);
  }
  const { plan, options } = recordedPlan(record);
  const ids = planStepIds(plan);
  const supplied = supply.map((entry) => entry.stepId);
  assertPlanStepIds([...stepIds, ...reject, ...supplied], (id) => rootStepId(id, ids) !== undefined);
  const decided = { record, run, plan, options, stepIds, reject, supply };
  return resumePlanRun(sessionScopeOf(internals, session), decided);
}
