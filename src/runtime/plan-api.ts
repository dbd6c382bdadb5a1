import { z } from 'zod';
import type { LiveSession } from '../actors/session-registry.js';
import { RuntimeError, isRuntimeError } from '../core/errors.js';
import { buildPlanGraph } from '../plans/plan-graph.js';
import { previewPlan } from '../plans/plan-preview.js';
import { parsePlan, parsePlanOptions, type Plan, type PlanOptions } from '../plans/plan-schema.js';
import { cancelledError } from '../plans/step-runner.js';
import type { StepResult } from '../plans/step-result.js';
import { planStepIds, rootStepId } from '../plans/step-ids.js';
import type { PlanRecord } from '../ledger/index.js';
import { assertPlanStepIds, runPlanSegment, type PlanRunResult } from './plan-run.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';

const usage = { inputTokens: 0, outputTokens: 0 };

/**
 * One session never has two open runs: a paused run holds the session until it is decided, supplied or
 * aborted, so a plan started meanwhile is refused (`rejected_busy`) rather than queued behind a pause that
 * may last a day.
 */
function assertNoPausedRun(session: LiveSession, what: string): void {
  const { run, pause } = session.actor.getSnapshot().context;
  if (run === null || pause === null) return;
  throw new RuntimeError(
    'rejected_busy',
    `${what}: run "${run.runId}" of this session is paused (${pause.state}); decide, supply or abort it first`,
  );
}

/**
 * `session.executePlan`: validate the plan (a cycle or a dangling dependency is refused before anything runs),
 * then run it as a run of the session, in its session lane. `preview` only resolves and validates.
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
  const { ledger, clock } = internals;
  const runId = internals.ids('run');
  const sessionKey = session.key;
  return internals.sessionLane.run(sessionKey, async () => {
    // Waited in the lane while the runtime began closing: nothing was recorded, nothing runs.
    assertOpen(internals);
    assertNoPausedRun(session, 'executePlan');
    const startedAt = clock.now();
    const record: PlanRecord = {
      runId,
      sessionKey,
      plan,
      options,
      approvedSteps: options.approvedSteps ?? [],
      createdAt: startedAt,
    };
    const opened = { runId, sessionKey, messageIds: [], provider: 'plan', model: options.mode, startedAt };
    await Promise.all([
      ledger.putPlan(record),
      ledger.openRun({ ...opened, status: 'running', usage, text: '' }),
    ]);
    internals.emit(session, {
      type: 'run.started',
      runId,
      messageIds: [],
      provider: 'plan',
      model: options.mode,
    });
    if (options.mode === 'preview') {
      const results = previewPlan(
        plan,
        graph,
        internals.toolsFor(sessionKey),
        internals.alwaysApprove,
        startedAt,
      );
      const text = `plan preview: ${results.filter((result) => result.success).length} of ${results.length} steps valid`;
      await ledger.closeRun(runId, { status: 'completed', endedAt: clock.now(), text, usage, cost: 0 });
      internals.emit(session, { type: 'run.ended', runId, status: 'completed', text, usage, durationMs: 0 });
      return { runId, status: 'preview', results };
    }
    const approved = new Set(record.approvedSteps);
    return runPlanSegment(internals, session, {
      runId,
      plan,
      graph,
      options,
      approved,
      previous: [],
      nextResult: 1,
      nextCompensation: 1,
      startedAt,
    });
  });
}

const approvePlanSchema = z
  .object({
    runId: z.string().min(1),
    stepIds: z.array(z.string().min(1)).default([]),
    reject: z.array(z.string().min(1)).default([]),
  })
  .strict()
  .refine(
    (input) => input.stepIds.length + input.reject.length > 0,
    'name at least one step to approve or reject',
  )
  .refine(
    (input) => !input.stepIds.some((id) => input.reject.includes(id)),
    'a step cannot be approved and rejected',
  );

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
  const parsed = approvePlanSchema.safeParse(input);
  if (!parsed.success)
    throw new RuntimeError('invalid_input', `approvePlan: ${z.prettifyError(parsed.error)}`);
  const { runId, stepIds, reject } = parsed.data;
  const { ledger, clock } = internals;
  const [record, run] = await Promise.all([ledger.getPlan(runId), ledger.getRun(runId)]);
  if (record === undefined || run === undefined || record.sessionKey !== session.key) {
    throw new RuntimeError('not_found', `approvePlan: session "${session.key}" has no plan run "${runId}"`);
  }
  if (run.status !== 'awaiting_approval' || internals.resumingPlans.has(runId)) {
    throw new RuntimeError('invalid_input', `approvePlan: plan run "${runId}" is not waiting for approval`);
  }
  const { plan, options } = recordedPlan(record);
  const ids = planStepIds(plan);
  assertPlanStepIds([...stepIds, ...reject], (id) => rootStepId(id, ids) !== undefined);
  internals.resumingPlans.add(runId);
  try {
    const previous: StepResult[] = await ledger.listStepResults(runId);
    const compensations = await ledger.listCompensations(runId);
    const done = new Set(previous.map((result) => result.stepId));
    const now = clock.now();
    let nextResult = previous.length + 1;
    const toolOf = (id: string) => plan.steps.find((step) => step.id === rootStepId(id, ids))?.tool ?? '';
    const writes = [ledger.approvePlanSteps(runId, stepIds)];
    for (const id of reject.filter((stepId) => !done.has(stepId))) {
      const rejected: StepResult = {
        stepId: id,
        success: false,
        error: cancelledError('rejected by the operator'),
        metadata: { executionTime: 0, retries: 0, startedAt: now },
      };
      previous.push(rejected);
      writes.push(ledger.putStepResult({ ...rejected, runId, seq: nextResult++, recordedAt: now }));
    }
    for (const [decision, list] of [
      ['approve', stepIds],
      ['reject', reject],
    ] as const) {
      for (const id of list) {
        internals.emit(session, {
          type: 'approval.resolved',
          runId,
          toolCallId: id,
          tool: toolOf(id),
          decision,
        });
      }
    }
    writes.push(ledger.setRunStatus(runId, 'running'));
    internals.emit(session, { type: 'run.resumed', runId, from: 'awaiting_approval' });
    await Promise.all(writes);
    return await internals.sessionLane.run(session.key, () =>
      runPlanSegment(internals, session, {
        runId,
        plan,
        graph: buildPlanGraph(plan),
        options,
        approved: new Set([...record.approvedSteps, ...stepIds]),
        previous,
        nextResult,
        nextCompensation: compensations.length + 1,
        startedAt: run.startedAt,
      }),
    );
  } finally {
    internals.resumingPlans.delete(runId);
  }
}
