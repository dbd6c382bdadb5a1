import { approvalIdOf, createDeferred, RuntimeError, type ErrorInfo } from '../core/index.js';
import {
  executePlanSteps,
  type PlanOutcome,
  type PlanGraph,
  type Plan,
  type PlanOptions,
  type StepResult,
  type StepRunContext,
  previewPlan,
} from '../plans/index.js';
import type { PlanRecord, RunRecord, StepResultRecord } from '../ledger/index.js';
import { runFailureCode } from '../policies/index.js';
import { abortStatusOf, runAbortReason, type AbortStatus } from './execute-run.js';
import { type SessionScope, assertAccepting, assertNoPausedRun } from './session-scope.js';
import { trackPlan, type RunWork } from './run-work.js';
import type { SessionControl, PausedPlan, PlanStepWait } from './session-scope.js';
import type { RunServices } from './run-services.js';
import type { RunSummary } from './run-request.js';

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
  /** The run's resumes so far (`run.resumed` events): a step in doubt is asked again under a new approval id. */
  readonly resumes?: number;
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
  // Each step the plan waits for (an expanded step's children included): its tool and request, for the pause.
  const awaitingTools = new Map<string, PlanStepWait>();
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
  sinks: { readonly awaitingTools: Map<string, PlanStepWait>; readonly write: WriteSink },
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
      const { id: toolCallId, tool, args } = unit;
      const inDoubt = segment.inDoubt?.has(toolCallId) === true;
      const approvalId = approvalIdOf(toolCallId, inDoubt ? (segment.resumes ?? 0) : undefined);
      sinks.awaitingTools.set(toolCallId, { stepId: toolCallId, tool, approvalId });
      const request = { runId, toolCallId, tool, args, stepId: toolCallId, approvalId };
      if (inDoubt) scope.control.emit({ type: 'tool.in_doubt', ...request, reason: inDoubtReason });
      scope.control.emit({ type: 'approval.requested', ...request });
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
  requests: ReadonlyMap<string, PlanStepWait>,
): Promise<void>[] {
  const { services, control } = scope;
  const writes = [services.ledger.setRunStatus(runId, 'awaiting_approval')];
  const steps = awaiting.map((stepId) => requests.get(stepId) ?? { stepId, tool: '', approvalId: stepId });
  const written = createDeferred<void>();
  control.pausePlan(runId, steps, services.clock.now(), written.promise);
  writes.push(control.persist());
  control.emit({ type: 'run.paused', runId, state: 'awaiting_approval', toolCallIds: [...awaiting] });
  void settledAndDelivered(control, writes).then(() => written.resolve());
  return writes;
}

/**
 * What `waitForEnd()` waits for before it answers a plan run's pause or end: the writes recording it settled, and
 * every event emitted up to now (its `run.paused` or `run.ended`, which go out after the session took it in)
 * delivered.
 */
function settledAndDelivered(control: SessionControl, writes: readonly Promise<unknown>[]): Promise<void> {
  return Promise.allSettled([...writes, control.delivered()]).then(() => undefined);
}

/**
 * The session lets an ended plan run go (`releasePlan`), then `announce` emits its end: `waitForEnd()` answers it
 * once `writes` settled and the announcement was delivered.
 */
function releaseEnded(
  control: SessionControl,
  summary: RunSummary,
  writes: readonly Promise<unknown>[],
  announce: () => void,
): void {
  const written = createDeferred<void>();
  control.releasePlan(summary.runId, { summary, written: written.promise });
  announce();
  void settledAndDelivered(control, writes).then(() => written.resolve());
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

/** A plan run calls no model: its usage is always zero. */
const usage = { inputTokens: 0, outputTokens: 0 };

/** A plan run to start: its id, the validated plan and its graph, and the options. */
export interface PlanStart {
  readonly runId: string;
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly options: PlanOptions;
}

/**
 * Run `body` with the plan run held by the session (from before its machine starts it): messages queue. The plan lets the session go when it ends; one that fails before it paused or
 * ended (refused in the lane, the runtime closing) lets it go here.
 */
export async function holdingSession<T>(
  control: SessionControl,
  runId: string,
  body: () => Promise<T>,
): Promise<T> {
  control.holdPlan(runId);
  try {
    return await body();
  } catch (error) {
    if (control.pausedPlan()?.runId !== runId) control.releasePlan(runId);
    throw error;
  }
}

/**
 * Start a plan run as a run of the session, which its machine starts when no other run is active: recorded and
 * announced, then executed (or, in `preview` mode, only resolved and validated).
 */
export async function startPlanRun(scope: SessionScope, start: PlanStart): Promise<PlanRunResult> {
  const { services, control } = scope;
  const { runId, plan, graph, options } = start;
  assertNoPausedRun(control, 'executePlan');
  return holdingSession(control, runId, () =>
    control.run('plan', runId, async (signal): Promise<PlanRunResult> => {
      // Waited behind a run while the runtime began closing: nothing was recorded, nothing runs.
      assertAccepting(services);
      assertNoPausedRun(control, 'executePlan');
      const startedAt = await openPlanRun(scope, start);
      if (options.mode === 'preview') return previewRun(scope, start, startedAt);
      const approved = new Set(options.approvedSteps ?? []);
      const first = {
        runId,
        plan,
        graph,
        options,
        approved,
        previous: [],
        nextResult: 1,
        nextCompensation: 1,
      };
      return runPlanSegment(scope, { ...first, startedAt }, signal);
    }),
  );
}

/** Record a new plan run (its definition and the open run) and announce it; resolves its start time. */
async function openPlanRun(scope: SessionScope, start: PlanStart): Promise<number> {
  const { ledger, clock } = scope.services;
  const { runId, plan, options } = start;
  const sessionKey = scope.control.key;
  const startedAt = clock.now();
  const approvedSteps = options.approvedSteps ?? [];
  const record: PlanRecord = { runId, sessionKey, plan, options, approvedSteps, createdAt: startedAt };
  const opened = { runId, sessionKey, messageIds: [], provider: 'plan', model: options.mode, startedAt };
  await Promise.all([
    ledger.putPlan(record),
    ledger.openRun({ ...opened, status: 'running', usage, text: '' }),
  ]);
  scope.control.emit({ type: 'run.started', runId, messageIds: [], provider: 'plan', model: options.mode });
  return startedAt;
}

/** A preview run: resolve and validate every step without executing, then end the run completed. */
async function previewRun(scope: SessionScope, start: PlanStart, startedAt: number): Promise<PlanRunResult> {
  const { services, control } = scope;
  const { runId } = start;
  const tools = services.toolsFor(control.key);
  const results = previewPlan(start.plan, start.graph, tools, services.alwaysApprove, startedAt);
  const text = `plan preview: ${results.filter((result) => result.success).length} of ${results.length} steps valid`;
  const endedAt = services.clock.now();
  await services.ledger.closeRun(runId, { status: 'completed', endedAt, text, usage, cost: 0 });
  const summary = { runId, status: 'completed' as const, text, messageIds: [], startedAt, endedAt };
  releaseEnded(control, summary, [], () =>
    control.emit({ type: 'run.ended', runId, status: 'completed', text, usage, durationMs: 0 }),
  );
  return { runId, status: 'preview', results };
}

/** How a plan that stopped without waiting failed: the code highest on the error ladder among its steps. */
function planError(results: readonly StepResult[]): ErrorInfo | undefined {
  const failed = results.filter((result) => !result.success && result.error !== undefined);
  const code = runFailureCode(failed.map((result) => result.error?.code ?? 'internal'));
  const first = failed.find((result) => result.error?.code === code);
  if (code === undefined || first === undefined) return undefined;
  return { code, message: `step "${first.stepId}" failed: ${first.error?.message ?? ''}` };
}

/** Close a plan run that stopped for good, with a one-line summary as its text. */
export function endPlanRun(
  scope: SessionScope,
  segment: PlanSegment,
  outcome: PlanOutcome & { readonly aborted: AbortStatus },
): Promise<void> {
  const { services, control } = scope;
  const { runId } = segment;
  // An aborted plan ends as its abort says: interrupted by a message, aborted by the caller.
  const status =
    outcome.status === 'awaiting_approval'
      ? 'failed'
      : outcome.status === 'aborted'
        ? outcome.aborted
        : outcome.status;
  const endedAt = services.clock.now();
  const succeeded = outcome.results.filter((result) => result.success).length;
  const text = `plan: ${succeeded} of ${outcome.results.length} steps succeeded`;
  const failure =
    outcome.status === 'aborted'
      ? { code: 'cancelled' as const, message: `the plan was ${status}` }
      : outcome.status === 'failed'
        ? planError(outcome.results)
        : undefined;
  const error = failure === undefined ? {} : { error: failure };
  const closed = services.ledger.closeRun(runId, { status, endedAt, text, usage, cost: 0, ...error });
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
  const durationMs = endedAt - segment.startedAt;
  releaseEnded(control, summary, [closed], () =>
    control.emit({ type: 'run.ended', runId, status, text, usage, durationMs, ...error }),
  );
  return closed;
}

/** A plan run of a session to end, and how: `aborted` or `interrupted`, and why. */
export interface PlanEnding {
  readonly sessionKey: string;
  readonly runId: string;
  readonly status: AbortStatus;
  readonly reason: string;
}

/**
 * End a plan run the session holds, as an abort or an interrupting message asks: a plan executing now is
 * aborted (it records its own end), a paused one is closed here. Settles once the end is recorded.
 */
export function endHeldPlan(
  services: RunServices,
  work: RunWork,
  control: SessionControl | undefined,
  ended: PlanEnding,
): Promise<void> {
  const { sessionKey, runId, status, reason } = ended;
  const active = work.plans.get(sessionKey)?.get(runId);
  if (active !== undefined) {
    if (!active.controller.signal.aborted) active.controller.abort(runAbortReason(status, reason));
    return active.finished;
  }
  const hold = control?.pausedPlan();
  if (control === undefined || hold?.runId !== runId) return Promise.resolve();
  return endPausedPlan({ services, work, control }, hold, status);
}

/**
 * Close a paused plan run without resuming it: the steps it waits for are recorded `cancelled` (their approvals
 * resolved `cancelled`), the run ends with `status`, and the session lets the plan go (its queue drains) before
 * `run.ended` is out. `approvePlan` is refused meanwhile; a plan that is no longer paused is left alone.
 */
export async function endPausedPlan(
  scope: SessionScope,
  hold: PausedPlan,
  status: AbortStatus,
): Promise<void> {
  const { ledger } = scope.services;
  const { resumingPlans } = scope.work;
  const { runId } = hold;
  if (resumingPlans.has(runId)) return;
  resumingPlans.add(runId);
  try {
    const [run, previous] = await Promise.all([ledger.getRun(runId), ledger.listStepResults(runId)]);
    if (run?.status !== 'awaiting_approval') {
      // Nothing left to close (ended meanwhile, or the row is gone): only let the session go.
      scope.control.releasePlan(runId);
      return;
    }
    await Promise.all(closePaused(scope, { hold, run, previous, status }));
  } finally {
    resumingPlans.delete(runId);
  }
}

/** The synchronous stretch that closes a paused plan: step results, the run's end, the session, the events. */
function closePaused(
  scope: SessionScope,
  paused: { hold: PausedPlan; run: RunRecord; previous: readonly StepResultRecord[]; status: AbortStatus },
): Promise<void>[] {
  const { ledger, clock } = scope.services;
  const { control } = scope;
  const { hold, run, previous, status } = paused;
  const { runId } = hold;
  const now = clock.now();
  const done = new Set(previous.map((result) => result.stepId));
  const waiting = hold.steps.filter((step) => !done.has(step.stepId));
  const cancelled: ErrorInfo = { code: 'cancelled', message: `the plan was ${status} while it waited` };
  const writes = waiting.map((step, index) =>
    ledger.putStepResult({
      runId,
      stepId: step.stepId,
      seq: previous.length + index + 1,
      success: false,
      error: cancelled,
      metadata: { executionTime: 0, retries: 0, startedAt: now },
      recordedAt: now,
    }),
  );
  const succeeded = previous.filter((result) => result.success).length;
  const text = `plan: ${succeeded} of ${previous.length + waiting.length} steps succeeded`;
  const error: ErrorInfo = { code: 'cancelled', message: `the plan was ${status}` };
  writes.push(ledger.closeRun(runId, { status, endedAt: now, text, usage, cost: 0, error }));
  const startedAt = run.startedAt;
  const summary: RunSummary = { runId, status, text, messageIds: [], startedAt, endedAt: now, error };
  releaseEnded(control, summary, writes, () => {
    for (const step of waiting) {
      const { stepId: toolCallId, tool } = step;
      control.emit({ type: 'approval.resolved', runId, toolCallId, tool, decision: 'cancelled' });
    }
    control.emit({ type: 'run.ended', runId, status, text, usage, durationMs: now - startedAt, error });
  });
  return writes;
}
