import { RuntimeError, toErrorInfo, type ErrorInfo } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { RunRecord } from '../ledger/index.js';
import { buildPlanGraph } from '../plans/index.js';
import { parsePlan, parsePlanOptions } from '../plans/index.js';
import type { StepResult } from '../plans/index.js';
import { durable, runPlanSegment, type PlanRunResult } from './plan-run.js';
import { holdingSession } from './plan-start.js';
import type { SessionScope } from './session-scope.js';

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
  const trace = planTraceOf(await ledger.readEvents({ sessionKey: control.key }), runId);
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
  };
  return runPlanSegment(scope, segment, signal);
}
