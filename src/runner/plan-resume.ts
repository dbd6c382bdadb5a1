import { RuntimeError, toErrorInfo, type ErrorInfo, type RuntimeEvent } from '../core/index.js';
import type { PlanRecord, RunRecord } from '../ledger/index.js';
import {
  buildPlanGraph,
  type Plan,
  type PlanOptions,
  type StepResult,
  cancelledError,
  planStepIds,
  rootStepId,
  parsePlan,
  parsePlanOptions,
} from '../plans/index.js';
import { runPlanSegment, type PlanRunResult, holdingSession, durable } from './plan-run.js';
import type { SessionScope } from './session-scope.js';
import { resumesOf } from './crash-resume.js';

/** A paused plan run and the operator's decisions on it (already validated). */
export interface PlanDecisions {
  readonly record: PlanRecord;
  readonly run: RunRecord;
  readonly plan: Plan;
  readonly options: PlanOptions;
  readonly stepIds: readonly string[];
  readonly reject: readonly string[];
  /** Steps in doubt whose outcome the operator supplies: recorded as their results, never run again. */
  readonly supply: readonly { readonly stepId: string; readonly output: unknown }[];
}

/**
 * Resume a paused plan run with the operator's decisions: record them, hold the session as running again, then
 * run the plan on where it stopped, as a run its session machine starts. A second resume of the same pause is refused meanwhile.
 */
export async function resumePlanRun(scope: SessionScope, decided: PlanDecisions): Promise<PlanRunResult> {
  const { services, control, work } = scope;
  const { ledger } = services;
  const { record, run, plan, options, stepIds } = decided;
  const { runId } = run;
  work.resumingPlans.add(runId);
  try {
    const previous: StepResult[] = await ledger.listStepResults(runId);
    const compensations = await ledger.listCompensations(runId);
    // Steps a crash left in doubt stay in doubt until the operator answers them.
    const events = await ledger.readEvents({ sessionKey: control.key });
    const { started } = planTraceOf(events, runId);
    const writes = recordDecisions(scope, decided, previous, started);
    const done = new Set(previous.map((result) => result.stepId));
    const decidedNow = new Set([
      ...stepIds,
      ...decided.reject,
      ...decided.supply.map((entry) => entry.stepId),
    ]);
    const inDoubt = [...started.keys()].filter((id) => !done.has(id) && !decidedNow.has(id));
    writes.push(ledger.setRunStatus(runId, 'running'));
    // The plan is handed to the session machine as it is held again, before its writes are awaited: a plan
    // started meanwhile (the session no longer looks paused) waits behind it instead of running first.
    const held = resumeHold(scope, runId, writes);
    held.catch(() => undefined);
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
      inDoubt: new Set(inDoubt),
      resumes: resumesOf(events, runId),
    };
    return await holdingSession(control, runId, () =>
      control.run('plan', runId, async (signal) => {
        await held;
        return runPlanSegment(scope, segment, signal);
      }),
    );
  } finally {
    work.resumingPlans.delete(runId);
  }
}

/**
 * Record the operator's decisions on a paused plan: the approvals, the rejected steps (failed `cancelled`, or
 * outcome unknown for a step in doubt; added to `previous`) and an `approval.resolved` event for each. Returns
 * the writes.
 */
function recordDecisions(
  scope: SessionScope,
  decided: PlanDecisions,
  previous: StepResult[],
  inDoubt: ReadonlyMap<string, string>,
): Promise<void>[] {
  const { ledger, clock } = scope.services;
  const { plan, stepIds, reject, supply } = decided;
  const { runId } = decided.run;
  const ids = planStepIds(plan);
  const done = new Set(previous.map((result) => result.stepId));
  const now = clock.now();
  const toolOf = (id: string) => plan.steps.find((step) => step.id === rootStepId(id, ids))?.tool ?? '';
  // Checked (and refused) before anything is written.
  const supplied = recordSupplied(scope, decided, previous, inDoubt);
  const writes = [ledger.approvePlanSteps(runId, [...stepIds]), ...supplied];
  for (const id of reject.filter((stepId) => !done.has(stepId))) {
    const rejected: StepResult = {
      stepId: id,
      success: false,
      error: inDoubt.has(id) ? outcomeUnknownError() : cancelledError('rejected by the operator'),
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
      scope.control.emit({ type: 'approval.resolved', runId, toolCallId: id, tool: toolOf(id), decision });
  }
  for (const { stepId } of supply) {
    scope.control.emit({
      type: 'approval.resolved',
      runId,
      toolCallId: stepId,
      tool: toolOf(stepId),
      decision: 'approve',
      message: 'the operator supplied the outcome',
    });
  }
  return writes;
}

/**
 * Record the outcomes the operator supplied for steps in doubt as their results (added to `previous`); only a step
 * a crash cut while its tool ran can be supplied (`invalid_input` otherwise, before anything is written).
 */
function recordSupplied(
  scope: SessionScope,
  decided: PlanDecisions,
  previous: StepResult[],
  inDoubt: ReadonlyMap<string, string>,
): Promise<void>[] {
  const { ledger, clock } = scope.services;
  const { supply } = decided;
  const { runId } = decided.run;
  const done = new Set(previous.map((result) => result.stepId));
  const now = clock.now();
  const notInDoubt = supply.find((entry) => !inDoubt.has(entry.stepId) || done.has(entry.stepId));
  if (notInDoubt !== undefined) {
    throw new RuntimeError(
      'invalid_input',
      `approvePlan: step "${notInDoubt.stepId}" is not in doubt: only the outcome of a step a crash cut can be supplied`,
    );
  }
  const writes: Promise<void>[] = [];
  for (const { stepId, output } of supply) {
    const known: StepResult = {
      stepId,
      success: true,
      data: output,
      metadata: { executionTime: 0, retries: 0, startedAt: now },
    };
    previous.push(known);
    writes.push(ledger.putStepResult({ ...known, runId, seq: previous.length, recordedAt: now }));
  }
  return writes;
}

/**
 * The session holds the plan as running again (messages still queue) before `run.resumed` is out; when the
 * resume cannot be recorded, the plan holds the session paused as before.
 */
async function resumeHold(
  scope: SessionScope,
  runId: string,
  writes: readonly Promise<void>[],
): Promise<void> {
  const { control } = scope;
  const paused = control.pausedPlan();
  control.holdPlan(runId);
  control.emit({ type: 'run.resumed', runId, from: 'awaiting_approval' });
  try {
    await Promise.all(writes);
  } catch (error) {
    // Nothing of the failed resume is left to write: the pause is answered once its events so far are out.
    if (paused?.runId === runId)
      control.pausePlan(runId, paused.steps, scope.services.clock.now(), control.delivered());
    throw error;
  }
}

/** The error of a plan step in doubt that an operator rejected: nobody knows whether it took effect. */
export function outcomeUnknownError(): ErrorInfo {
  return toErrorInfo(
    new RuntimeError(
      'tool_failed',
      'the outcome of this step is unknown (it was cut off by a restart and not run again)',
    ),
  );
}

/** What a plan run's recorded events say about its steps. */
export interface PlanTrace {
  /** Steps whose outcome an event recorded (`tool.succeeded` / `tool.failed`), as results. */
  readonly outcomes: Map<string, StepResult>;
  /** Steps that started (`tool.called`) with no outcome since and no operator's approval to run again: in doubt. */
  readonly started: Map<string, string>;
}

/** Read a plan run's steps from its events: which ended (with what), and which started and never ended. */
export function planTraceOf(events: readonly RuntimeEvent[], runId: string): PlanTrace {
  const outcomes = new Map<string, StepResult>();
  const started = new Map<string, string>();
  for (const event of events) {
    if (event.runId !== runId) continue;
    const metadata = { executionTime: 0, retries: 0, startedAt: event.at };
    if (event.type === 'tool.called' && event.stepId !== undefined) {
      started.set(event.stepId, event.tool);
      outcomes.delete(event.stepId);
    } else if (event.type === 'tool.succeeded' && event.stepId !== undefined) {
      started.delete(event.stepId);
      outcomes.set(event.stepId, { stepId: event.stepId, success: true, data: event.output, metadata });
    } else if (event.type === 'tool.failed' && event.stepId !== undefined) {
      started.delete(event.stepId);
      outcomes.set(event.stepId, { stepId: event.stepId, success: false, error: event.error, metadata });
    } else if (event.type === 'approval.resolved' && event.decision === 'approve') {
      // The operator answered the doubt: the step may run again.
      started.delete(event.toolCallId);
    }
  }
  return { outcomes, started };
}

/**
 * Resume a plan run a crash cut (its `run.resumed` is out already, from recovery), as an approval resumes one: the
 * session holds it, steps with a recorded result never run again (a result only its events recorded is recorded
 * now), a step that started with no outcome runs again only when its tool is idempotent; any other waits in doubt
 * (`tool.in_doubt`, `approval.requested`) for `approvePlan` (approve runs it again, reject fails it outcome unknown).
 */
export async function resumeCrashedPlan(scope: SessionScope, run: RunRecord): Promise<PlanRunResult> {
  const { control } = scope;
  const { runId } = run;
  // Handed to the session machine before anything is read: a plan started after the restart waits for this one.
  return holdingSession(control, runId, () =>
    control.run('plan', runId, (signal) => runCut(scope, run, signal)),
  );
}

/** Read where the cut plan stood and run it on (as its session machine's run, aborted by `signal`). */
async function runCut(scope: SessionScope, run: RunRecord, signal: AbortSignal): Promise<PlanRunResult> {
  const { services, control } = scope;
  const { ledger, clock } = services;
  const { runId } = run;
  const record = await ledger.getPlan(runId);
  if (record === undefined) throw new RuntimeError('ledger_corrupt', `plan run "${runId}" has no plan row`);
  const plan = parsePlan(record.plan);
  const options = parsePlanOptions(record.options);
  const previous: StepResult[] = await ledger.listStepResults(runId);
  const events = await ledger.readEvents({ sessionKey: control.key });
  const trace = planTraceOf(events, runId);
  const done = new Set(previous.map((result) => result.stepId));
  const writes: Promise<void>[] = [];
  for (const [stepId, result] of trace.outcomes) {
    if (done.has(stepId)) continue;
    previous.push(result);
    writes.push(ledger.putStepResult({ ...result, runId, seq: previous.length, recordedAt: clock.now() }));
  }
  await durable(writes);
  const tools = services.toolsFor(control.key);
  const inDoubt = [...trace.started]
    .filter(([stepId, tool]) => !done.has(stepId) && tools.get(tool)?.idempotent !== true)
    .map(([stepId]) => stepId);
  const compensations = await ledger.listCompensations(runId);
  const segment = {
    runId,
    plan,
    graph: buildPlanGraph(plan),
    options,
    approved: new Set(record.approvedSteps),
    previous,
    nextResult: previous.length + 1,
    nextCompensation: compensations.length + 1,
    startedAt: run.startedAt,
    inDoubt: new Set(inDoubt),
    resumes: resumesOf(events, runId),
  };
  return runPlanSegment(scope, segment, signal);
}
