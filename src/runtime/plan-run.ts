import type { LiveSession } from '../actors/session-registry.js';
import type { RunSummary } from '../runner/run-summary.js';
import { createDeferred } from '../core/deferred.js';
import { RuntimeError } from '../core/errors.js';
import type { ErrorInfo } from '../core/errors.js';
import { runFailureCode } from '../policies/error-ladder.js';
import { executePlanSteps, type PlanOutcome } from '../plans/plan-executor.js';
import type { PlanGraph } from '../plans/plan-graph.js';
import type { Plan, PlanOptions } from '../plans/plan-schema.js';
import type { StepResult } from '../plans/step-result.js';
import type { StepRunContext } from '../plans/step-runner.js';
import { abortStatusOf, type AbortStatus } from '../runner/run-abort.js';
import { settleWork } from './settle-work.js';
import type { RuntimeInternals } from './runtime-internals.js';

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
}

/** A plan run executing now: its abort, and a promise settled once it stopped. */
export interface ActivePlan {
  readonly controller: AbortController;
  readonly finished: Promise<void>;
}

/** The plan runs executing now, per session, so `abort()` and `close()` reach them. */
export type ActivePlans = Map<string, Map<string, ActivePlan>>;

function track(plans: ActivePlans, sessionKey: string, runId: string, plan: ActivePlan): () => void {
  let runs = plans.get(sessionKey);
  if (runs === undefined) {
    runs = new Map();
    plans.set(sessionKey, runs);
  }
  runs.set(runId, plan);
  return () => {
    runs.delete(runId);
    if (runs.size === 0) plans.delete(sessionKey);
  };
}

/** How a plan that stopped without waiting failed: the code highest on the error ladder among its steps. */
function planError(results: readonly StepResult[]): ErrorInfo | undefined {
  const failed = results.filter((result) => !result.success && result.error !== undefined);
  const code = runFailureCode(failed.map((result) => result.error?.code ?? 'internal'));
  const first = failed.find((result) => result.error?.code === code);
  if (code === undefined || first === undefined) return undefined;
  return { code, message: `step "${first.stepId}" failed: ${first.error?.message ?? ''}` };
}

/**
 * Execute a plan run (inside the session lane): steps run with the session's tools and policies, every result and
 * compensation is recorded as it happens, and the run ends (`run.ended`) or pauses (`run.paused`, approvals
 * requested) when the executor stops.
 */
export async function runPlanSegment(
  internals: RuntimeInternals,
  session: LiveSession,
  segment: PlanSegment,
): Promise<PlanRunResult> {
  const { ledger, clock } = internals.services;
  const { runId } = segment;
  const sessionKey = session.key;
  // Every write of the segment is awaited before it answers: a plan reported completed is completed on disk.
  const writes: Promise<void>[] = [];
  const write = (promise: Promise<void>): void => {
    writes.push(promise);
    promise.catch(() => undefined);
  };
  const emit: StepRunContext['emit'] = (event) => internals.emit(session, event);
  const controller = new AbortController();
  const finished = createDeferred<void>();
  const untrack = track(internals.activePlans, sessionKey, runId, { controller, finished: finished.promise });
  // The tool of each step the plan waits for (an expanded step's children included), for the session's pause.
  const awaitingTools = new Map<string, string>();
  let resultSeq = segment.nextResult;
  const context = stepContext(internals, session, segment, controller.signal, write);
  let outcome: PlanOutcome;
  try {
    outcome = await executePlanSteps(context, {
      plan: segment.plan,
      graph: segment.graph,
      options: segment.options,
      approved: segment.approved,
      previous: segment.previous,
      alwaysApprove: internals.services.alwaysApprove,
      onAwaiting: (unit) => {
        awaitingTools.set(unit.id, unit.tool);
        emit({
          type: 'approval.requested',
          runId,
          toolCallId: unit.id,
          tool: unit.tool,
          args: unit.args,
          stepId: unit.id,
        });
      },
      onResult: (result) =>
        write(ledger.putStepResult({ ...result, runId, seq: resultSeq++, recordedAt: clock.now() })),
    });
  } finally {
    untrack();
    finished.resolve();
  }
  if (outcome.status === 'awaiting_approval') {
    for (const paused of pausePlanRun(internals, session, runId, outcome.awaiting, awaitingTools))
      write(paused);
    await durable(writes);
    return { runId, status: outcome.status, results: outcome.results, awaiting: outcome.awaiting };
  }
  write(endPlanRun(internals, session, segment, { ...outcome, aborted: abortStatusOf(controller.signal) }));
  await durable(writes);
  return { runId, status: outcome.status, results: outcome.results };
}

/** What the plan's steps run with: the session's tools, the segment's signal, compensations recorded. */
function stepContext(
  internals: RuntimeInternals,
  session: LiveSession,
  segment: PlanSegment,
  signal: AbortSignal,
  write: (promise: Promise<void>) => void,
): StepRunContext {
  const { ledger, clock } = internals.services;
  const { runId } = segment;
  const sessionKey = session.key;
  const emit: StepRunContext['emit'] = (event) => internals.emit(session, event);
  let compensationSeq = segment.nextCompensation;
  return {
    runId,
    sessionKey,
    clock,
    random: internals.services.random,
    tools: internals.services.toolsFor(sessionKey),
    options: segment.options,
    signal,
    emit,
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
  internals: RuntimeInternals,
  session: LiveSession,
  runId: string,
  awaiting: readonly string[],
  tools: ReadonlyMap<string, string>,
): Promise<void>[] {
  const writes = [internals.services.ledger.setRunStatus(runId, 'awaiting_approval')];
  const steps = awaiting.map((stepId) => ({ stepId, tool: tools.get(stepId) ?? '' }));
  session.actor.send({ type: 'PLAN.PAUSED', runId, steps, at: internals.services.clock.now() });
  writes.push(internals.registry.persist(session));
  internals.emit(session, {
    type: 'run.paused',
    runId,
    state: 'awaiting_approval',
    toolCallIds: [...awaiting],
  });
  return writes;
}

/** Wait for a segment's writes; one that failed makes the answer `ledger_unavailable` (the cause attached). */
async function durable(writes: readonly Promise<void>[]): Promise<void> {
  try {
    await Promise.all(writes);
  } catch (error) {
    throw new RuntimeError('ledger_unavailable', 'the plan run could not be recorded in the ledger', {
      cause: error,
    });
  }
}

/** Close a plan run that stopped for good, with a one-line summary as its text. */
function endPlanRun(
  internals: RuntimeInternals,
  session: LiveSession,
  segment: PlanSegment,
  outcome: PlanOutcome & { readonly aborted: AbortStatus },
): Promise<void> {
  const { runId } = segment;
  // An aborted plan ends as its abort says: interrupted by a message, aborted by the caller.
  const status =
    outcome.status === 'awaiting_approval'
      ? 'failed'
      : outcome.status === 'aborted'
        ? outcome.aborted
        : outcome.status;
  const endedAt = internals.services.clock.now();
  const succeeded = outcome.results.filter((result) => result.success).length;
  const text = `plan: ${succeeded} of ${outcome.results.length} steps succeeded`;
  const failure =
    outcome.status === 'aborted'
      ? { code: 'cancelled' as const, message: `the plan was ${status}` }
      : outcome.status === 'failed'
        ? planError(outcome.results)
        : undefined;
  const error = failure === undefined ? {} : { error: failure };
  const usage = { inputTokens: 0, outputTokens: 0 };
  const closed = internals.services.ledger.closeRun(runId, {
    status,
    endedAt,
    text,
    usage,
    cost: 0,
    ...error,
  });
  const summary: RunSummary = {
    runId,
    status,
    text,
    messageIds: [],
    startedAt: segment.startedAt,
    endedAt,
    ...error,
  };
  // The session lets the plan go (queued messages drain) before run.ended is out.
  session.actor.send({ type: 'PLAN.ENDED', runId, summary });
  internals.emit(session, {
    type: 'run.ended',
    runId,
    status,
    text,
    usage,
    durationMs: endedAt - segment.startedAt,
    ...error,
  });
  return closed;
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

/**
 * Let the plan runs executing now finish within `timeoutMs`, then abort those still running and wait for them to
 * record their end (what `runtime.close()` does before the ledger closes).
 */
export function settleActivePlans(internals: RuntimeInternals, timeoutMs: number): Promise<void> {
  const plans = [...internals.activePlans.values()].flatMap((runs) => [...runs.values()]);
  return settleWork(internals.services.clock, plans, timeoutMs);
}
