import { z } from 'zod';
import { pausedPlanOf } from '../actors/session-plans.js';
import type { LiveSession } from '../actors/session-registry.js';
import { RuntimeError, isRuntimeError } from '../core/errors.js';
import { buildPlanGraph, type PlanGraph } from '../plans/plan-graph.js';
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
 * One session never has two open runs: a paused run (or paused plan) holds the session until it is decided,
 * supplied or aborted, so a plan started meanwhile is refused (`rejected_busy`) rather than queued behind a
 * pause that may last a day.
 */
function assertNoPausedRun(session: LiveSession, what: string): void {
  const context = session.actor.getSnapshot().context;
  const { run, pause } = context;
  const paused =
    run !== null && pause !== null ? { runId: run.runId, state: pause.state } : pausedPlanOf(context);
  if (paused === undefined) return;
  throw new RuntimeError(
    'rejected_busy',
    `${what}: run "${paused.runId}" of this session is paused (${paused.state}); decide, supply or abort it first`,
  );
}

/**
 * Run `body` with the plan run held by the session (from before it waits for the lane): no other run starts
 * meanwhile, messages queue. The plan lets the session go when it ends; one that fails before it paused or
 * ended (refused in the lane, the runtime closing) lets it go here.
 */
async function holdingSession<T>(session: LiveSession, runId: string, body: () => Promise<T>): Promise<T> {
  session.actor.send({ type: 'PLAN.HELD', runId });
  try {
    return await body();
  } catch (error) {
    if (pausedPlanOf(session.actor.getSnapshot().context)?.runId !== runId)
      session.actor.send({ type: 'PLAN.ENDED', runId });
    throw error;
  }
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
  const runId = internals.services.ids('run');
  assertNoPausedRun(session, 'executePlan');
  return holdingSession(session, runId, () =>
    internals.services.sessionLane.run(session.key, async (): Promise<PlanRunResult> => {
      // Waited in the lane while the runtime began closing: nothing was recorded, nothing runs.
      assertOpen(internals);
      assertNoPausedRun(session, 'executePlan');
      const startedAt = await openPlanRun(internals, session, { runId, plan, options });
      if (options.mode === 'preview')
        return previewRun(internals, session, { runId, plan, graph, startedAt });
      return runPlanSegment(internals, session, {
        runId,
        plan,
        graph,
        options,
        approved: new Set(options.approvedSteps ?? []),
        previous: [],
        nextResult: 1,
        nextCompensation: 1,
        startedAt,
      });
    }),
  );
}

/** Record a new plan run (its definition and the open run) and announce it; resolves its start time. */
async function openPlanRun(
  internals: RuntimeInternals,
  session: LiveSession,
  run: { runId: string; plan: Plan; options: PlanOptions },
): Promise<number> {
  const { runId, plan, options } = run;
  const sessionKey = session.key;
  const startedAt = internals.services.clock.now();
  const approvedSteps = options.approvedSteps ?? [];
  const record: PlanRecord = { runId, sessionKey, plan, options, approvedSteps, createdAt: startedAt };
  const opened = { runId, sessionKey, messageIds: [], provider: 'plan', model: options.mode, startedAt };
  await Promise.all([
    internals.services.ledger.putPlan(record),
    internals.services.ledger.openRun({ ...opened, status: 'running', usage, text: '' }),
  ]);
  internals.emit(session, {
    type: 'run.started',
    runId,
    messageIds: [],
    provider: 'plan',
    model: options.mode,
  });
  return startedAt;
}

/** A preview run: resolve and validate every step without executing, then end the run completed. */
async function previewRun(
  internals: RuntimeInternals,
  session: LiveSession,
  run: { runId: string; plan: Plan; graph: PlanGraph; startedAt: number },
): Promise<PlanRunResult> {
  const { runId, startedAt } = run;
  const tools = internals.services.toolsFor(session.key);
  const results = previewPlan(run.plan, run.graph, tools, internals.services.alwaysApprove, startedAt);
  const text = `plan preview: ${results.filter((result) => result.success).length} of ${results.length} steps valid`;
  const endedAt = internals.services.clock.now();
  await internals.services.ledger.closeRun(runId, { status: 'completed', endedAt, text, usage, cost: 0 });
  const summary = { runId, status: 'completed' as const, text, messageIds: [], startedAt, endedAt };
  session.actor.send({ type: 'PLAN.ENDED', runId, summary });
  internals.emit(session, { type: 'run.ended', runId, status: 'completed', text, usage, durationMs: 0 });
  return { runId, status: 'preview', results };
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
  const { ledger } = internals.services;
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
    const writes = recordDecisions(internals, session, { runId, plan, stepIds, reject, previous });
    writes.push(ledger.setRunStatus(runId, 'running'));
    await resumeHold(internals, session, runId, writes);
    const segment = {
      runId,
      plan,
      graph: buildPlanGraph(plan),
      options,
      approved: new Set([...record.approvedSteps, ...stepIds]),
      previous,
      nextResult: previous.length + 1,
      nextCompensation: compensations.length + 1,
      startedAt: run.startedAt,
    };
    return await holdingSession(session, runId, () =>
      internals.services.sessionLane.run(session.key, () => runPlanSegment(internals, session, segment)),
    );
  } finally {
    internals.resumingPlans.delete(runId);
  }
}

/**
 * Record the operator's decisions on a paused plan: the approvals, the rejected steps (failed `cancelled`, added
 * to `previous`) and an `approval.resolved` event for each. Returns the writes.
 */
function recordDecisions(
  internals: RuntimeInternals,
  session: LiveSession,
  decided: { runId: string; plan: Plan; stepIds: string[]; reject: string[]; previous: StepResult[] },
): Promise<void>[] {
  const { ledger, clock } = internals.services;
  const { runId, plan, stepIds, reject, previous } = decided;
  const ids = planStepIds(plan);
  const done = new Set(previous.map((result) => result.stepId));
  const now = clock.now();
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
    writes.push(ledger.putStepResult({ ...rejected, runId, seq: previous.length, recordedAt: now }));
  }
  for (const [decision, list] of [
    ['approve', stepIds],
    ['reject', reject],
  ] as const) {
    for (const id of list)
      internals.emit(session, {
        type: 'approval.resolved',
        runId,
        toolCallId: id,
        tool: toolOf(id),
        decision,
      });
  }
  return writes;
}

/**
 * The session holds the plan as running again (messages still queue) before `run.resumed` is out; when the
 * resume cannot be recorded, the plan holds the session paused as before.
 */
async function resumeHold(
  internals: RuntimeInternals,
  session: LiveSession,
  runId: string,
  writes: readonly Promise<void>[],
): Promise<void> {
  const paused = pausedPlanOf(session.actor.getSnapshot().context);
  session.actor.send({ type: 'PLAN.HELD', runId });
  internals.emit(session, { type: 'run.resumed', runId, from: 'awaiting_approval' });
  try {
    await Promise.all(writes);
  } catch (error) {
    if (paused?.runId === runId)
      session.actor.send({ ...paused, type: 'PLAN.PAUSED', at: internals.services.clock.now() });
    throw error;
  }
}
