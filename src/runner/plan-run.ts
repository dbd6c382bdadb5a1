import { createDeferred, RuntimeError } from '../core/index.js';
import {
  executePlanSteps,
  type PlanOutcome,
  type PlanGraph,
  type Plan,
  type PlanOptions,
  type StepResult,
  type StepRunContext,
} from '../plans/index.js';
import { abortStatusOf } from './execute-run.js';
import { endPlanRun } from './plan-end.js';
import type { SessionScope } from './session-scope.js';
import { trackPlan } from './run-work.js';

/** What `executePlan` and `approvePlan` resolve with once the plan stops. */
export interface PlanRunResult {
  readonly runId: string;
  readonly status: PlanOutcome['status'] | 'preview';
  /** Step results in plan order (an expanded step's children in its place). */
  readonly results: readonly StepResult[];
  /** With `awaiting_approval`: the step ids to approve (or reject) with `approvePlan`. */
  readonly awaiting?: readonly string[];
}

/** One execution of a plan run, first or resumed. */
export interface PlanSegment {
  readonly runId: string;
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly options: PlanOptions;
  readonly approved: ReadonlySet<string>;
  readonly previous: readonly StepResult[];
  /** Next `seq` for recorded step results and compensations. */
  readonly nextResult: number;
  readonly nextCompensation: number;
  readonly startedAt: number;
  /** Steps a crash cut while they ran: each waits for an operator (approve runs it again). @default none */
  readonly inDoubt?: ReadonlySet<string>;
}

/** Why a plan step is in doubt. */
const inDoubtReason = 'the process stopped while the step ran: whether it took effect is unknown';

/** Collects a segment's ledger writes, to await them all before it answers. */
type WriteSink = (promise: Promise<void>) => void;

/**
 * Execute a plan run (as its session machine's run, which aborts it through `signal`): steps run with the
 * session's tools and policies, every result and compensation is recorded as it happens, and the run ends
 * (`run.ended`) or pauses (`run.paused`, approvals requested) when the executor stops.
 */
export async function runPlanSegment(
  scope: SessionScope,
  segment: PlanSegment,
  signal?: AbortSignal,
): Promise<PlanRunResult> {
  const { control } = scope;
  const { runId } = segment;
  // Every write of the segment is awaited before it answers: a plan reported completed is completed on disk.
  const writes: Promise<void>[] = [];
  const write: WriteSink = (promise) => {
    writes.push(promise);
    promise.catch(() => undefined);
  };
  const controller = new AbortController();
  // The machine's abort carries how the run ends (aborted, interrupted): the plan ends so.
  const follow = (): void => controller.abort(signal?.reason);
  if (signal?.aborted === true) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  const finished = createDeferred<void>();
  const untrack = trackPlan(scope.work, control.key, runId, { controller, finished: finished.promise });
  // The tool of each step the plan waits for (an expanded step's children included), for the session's pause.
  const awaitingTools = new Map<string, string>();
  let outcome: PlanOutcome;
  try {
    outcome = await executeSteps(scope, segment, stepContext(scope, segment, controller.signal, write), {
      awaitingTools,
      write,
    });
  } finally {
    signal?.removeEventListener('abort', follow);
    untrack();
    finished.resolve();
  }
  if (outcome.status === 'awaiting_approval') {
    for (const paused of pausePlanRun(scope, runId, outcome.awaiting, awaitingTools)) write(paused);
    await durable(writes);
    return { runId, status: outcome.status, results: outcome.results, awaiting: outcome.awaiting };
  }
  write(endPlanRun(scope, segment, { ...outcome, aborted: abortStatusOf(controller.signal) }));
  await durable(writes);
  return { runId, status: outcome.status, results: outcome.results };
}

/** Run the segment's steps: approvals requested as the executor reaches them, results recorded in order. */
function executeSteps(
  scope: SessionScope,
  segment: PlanSegment,
  context: StepRunContext,
  sinks: { readonly awaitingTools: Map<string, string>; readonly write: WriteSink },
): Promise<PlanOutcome> {
  const { ledger, clock, alwaysApprove } = scope.services;
  const { runId } = segment;
  let resultSeq = segment.nextResult;
  return executePlanSteps(context, {
    plan: segment.plan,
    graph: segment.graph,
    options: segment.options,
    approved: segment.approved,
    previous: segment.previous,
    alwaysApprove,
    ...(segment.inDoubt === undefined ? {} : { inDoubt: segment.inDoubt }),
    onAwaiting: (unit) => {
      sinks.awaitingTools.set(unit.id, unit.tool);
      if (segment.inDoubt?.has(unit.id) === true) {
        const { id: toolCallId, tool, args } = unit;
        scope.control.emit({
          type: 'tool.in_doubt',
          runId,
          toolCallId,
          tool,
          args,
          reason: inDoubtReason,
          stepId: toolCallId,
        });
      }
      scope.control.emit({
        type: 'approval.requested',
        runId,
        toolCallId: unit.id,
        tool: unit.tool,
        args: unit.args,
        stepId: unit.id,
      });
    },
    onResult: (result) =>
      sinks.write(ledger.putStepResult({ ...result, runId, seq: resultSeq++, recordedAt: clock.now() })),
  });
}

/** What the plan's steps run with: the session's tools, the segment's signal, compensations recorded. */
function stepContext(
  scope: SessionScope,
  segment: PlanSegment,
  signal: AbortSignal,
  write: WriteSink,
): StepRunContext {
  const { services, control } = scope;
  const { ledger, clock } = services;
  const { runId } = segment;
  const sessionKey = control.key;
  const emit: StepRunContext['emit'] = (event) => control.emit(event);
  let compensationSeq = segment.nextCompensation;
  return {
    runId,
    sessionKey,
    clock,
    random: services.random,
    tools: services.toolsFor(sessionKey),
    options: segment.options,
    signal,
    emit,
    ...(services.stepJobs === undefined ? {} : { runTool: services.stepJobs }),
    durable: () => services.sessionPort(sessionKey).durable?.() ?? Promise.resolve(),
    compensate: ({ toolCallId, tool, args, output }) => {
      const seq = compensationSeq++;
      const record = { sessionKey, runId, seq, toolCallId, tool, args, result: output };
      write(ledger.appendCompensation({ ...record, status: 'pending', recordedAt: clock.now() }));
      emit({ type: 'undo.enqueued', runId, toolCallId, tool, args, index: seq });
    },
  };
}

/**
 * Pause a plan run for approval of `awaiting`: the session holds the paused plan (messages queue) before
 * `run.paused` is out, and its snapshot keeps it. Returns the writes.
 */
function pausePlanRun(
  scope: SessionScope,
  runId: string,
  awaiting: readonly string[],
  tools: ReadonlyMap<string, string>,
): Promise<void>[] {
  const { services, control } = scope;
  const writes = [services.ledger.setRunStatus(runId, 'awaiting_approval')];
  const steps = awaiting.map((stepId) => ({ stepId, tool: tools.get(stepId) ?? '' }));
  control.pausePlan(runId, steps, services.clock.now());
  writes.push(control.persist());
  control.emit({ type: 'run.paused', runId, state: 'awaiting_approval', toolCallIds: [...awaiting] });
  return writes;
}

/** Wait for a segment's writes; one that failed makes the answer `ledger_unavailable` (the cause attached). */
export async function durable(writes: readonly Promise<void>[]): Promise<void> {
  try {
    await Promise.all(writes);
  } catch (error) {
    throw new RuntimeError('ledger_unavailable', 'the plan run could not be recorded in the ledger', {
      cause: error,
    });
  }
}

/** Refuse a plan step id the plan does not have (neither a step nor a child of one). */
export function assertPlanStepIds(ids: readonly string[], known: (id: string) => boolean): void {
  const unknown = ids.filter((id) => !known(id));
  if (unknown.length > 0) {
    throw new RuntimeError(
      'invalid_input',
      `approvePlan: the plan has no step ${unknown.map((id) => `"${id}"`).join(', ')}`,
    );
  }
}
