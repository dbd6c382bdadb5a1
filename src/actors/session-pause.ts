import { attributeMessage } from '../policies/index.js';
import {
  type AbortStatus,
  type SteerMessage,
  type RunPaused,
  type RunResult,
  type WaitingCall,
} from '../runner/index.js';
import type {
  QueuedMessage,
  SessionContext,
  PlanHold,
  PlanStepWait,
  SessionEvent,
  DecideEvent,
} from './session-context.js';
import { approvalIdOf, type PauseState } from '../core/index.js';
import type { Ledger, RunRecord, SessionState, ToolCallRecord } from '../ledger/index.js';

/**
 * The run paused: remember what it waits for and until when. Steer messages the run had not admitted yet go to
 * the front of the queue as followups (a paused run takes no steering).
 */
export function pauseRun(
  context: SessionContext,
  paused: RunPaused,
  unadmitted: readonly QueuedMessage[],
  until: number,
): SessionContext {
  const queued = new Set(context.queue.map((item) => item.messageId));
  const returned = unadmitted.filter((item) => !queued.has(item.messageId));
  return {
    ...context,
    queue: returned.length > 0 ? [...returned, ...context.queue] : context.queue,
    pause: {
      state: paused.state,
      calls: paused.calls.map((call) => ({ ...call, settled: false })),
      until,
    },
  };
}

/** One waiting call was decided or supplied. */
export function answerPausedCall(context: SessionContext, turn: number, position: number): SessionContext {
  const { pause } = context;
  if (pause === null) return context;
  const calls = pause.calls.map((call) =>
    call.turn === turn && call.position === position ? { ...call, settled: true } : call,
  );
  return { ...context, pause: { ...pause, calls } };
}

/** The approval id a recorded waiting call is answered with (a call in doubt: a new request at each pause). */
export function approvalIdOfCall(call: Pick<ToolCallRecord, 'toolCallId' | 'kind' | 'requestedAt'>): string {
  return approvalIdOf(call.toolCallId, call.kind === 'in_doubt' ? call.requestedAt : undefined);
}

/** What the session says to an answer: the waiting call it answers, or why it refuses it (nothing changes then). */
export type DecisionVerdict =
  | { readonly ok: true; readonly call: WaitingCall }
  | { readonly ok: false; readonly code: 'not_found' | 'invalid_input'; readonly message: string };

/**
 * The session's verdict on an answer to call `toolCallId` of its paused run: the rules of the `decides` guard. An
 * id the pause does not know (another session's, a run that is not paused, a paused plan's step, a typo) is
 * `not_found`; a call already settled, or waiting for the other kind of answer, is `invalid_input`. A call in
 * doubt takes either answer: a decision (approve runs it again) or the outcome an operator knows.
 */
export function decisionOn(context: SessionContext, event: DecideEvent): DecisionVerdict {
  const { pause, run, sessionKey } = context;
  const { toolCallId, answer } = event;
  const what = answer === 'approval' ? 'approve' : 'supplyToolResult';
  const matches = (pause?.calls ?? []).filter((call) => call.toolCallId === toolCallId);
  const call = matches.find((candidate) => !candidate.settled) ?? matches[0];
  // A paused plan's steps are decided with approvePlan, not one call at a time.
  if (pause === null || run === null || call === undefined || run.kind === 'plan') {
    const message = `${what}: no tool call "${toolCallId}" is waiting in session "${sessionKey}"`;
    return { ok: false, code: 'not_found', message };
  }
  if (call.needs !== answer && call.inDoubt !== true) {
    const instead = call.needs === 'approval' ? 'approve()' : 'supplyToolResult()';
    const message = `${what}: tool call "${toolCallId}" waits for ${instead}`;
    return { ok: false, code: 'invalid_input', message };
  }
  if (call.settled) {
    const message = `${what}: tool call "${toolCallId}" was already settled`;
    return { ok: false, code: 'invalid_input', message };
  }
  // An answer to an earlier request of the call (before a crash left it in doubt) must not run it again.
  if (event.approvalId !== undefined && event.approvalId !== (call.approvalId ?? call.toolCallId)) {
    const message = `${what}: approval "${event.approvalId}" is not what tool call "${toolCallId}" waits on (an answer to an earlier request, or a made-up id)`;
    return { ok: false, code: 'not_found', message };
  }
  const { tool, turn, position } = call;
  return { ok: true, call: { runId: run.runId, toolCallId: call.toolCallId, tool, turn, position } };
}

/** Calls of the pause still waiting for `needs` (any when omitted). */
export function waitingCalls(context: SessionContext, needs?: 'approval' | 'deferred'): number {
  return (context.pause?.calls ?? []).filter(
    (call) => !call.settled && (needs === undefined || call.needs === needs),
  ).length;
}

/**
 * Where the pause stands once its calls were settled: gone when nothing waits (the run goes on), waiting for tool
 * results when only deferred calls wait, else as it was.
 */
export function pauseStateAfter(context: SessionContext): PauseState | undefined {
  if (waitingCalls(context) === 0) return undefined;
  return waitingCalls(context, 'approval') > 0 ? context.pause?.state : 'awaiting_tool_results';
}

/**
 * The paused run continues (every call answered, or the pause expired), or, with `abort`, only ends: its lane
 * turn records the end. Either way `running` starts the run again.
 */
export function continueRun(
  context: SessionContext,
  abort?: { readonly status: AbortStatus; readonly reason: string },
): SessionContext {
  const { run, pause } = context;
  if (run === null || pause === null) return context;
  const resume = { from: pause.state, ...(abort === undefined ? {} : { abort }) };
  return { ...context, run: { ...run, resume }, pause: null };
}

/** A steer message no turn admitted, as the followup it becomes (never lost). */
export function unadmittedItem(now: number) {
  return (message: SteerMessage): QueuedMessage => {
    // A message this session steered goes back as it was queued (its sender and role), only as a followup now.
    const queued = queuedOf(message);
    return queued === undefined
      ? plainItem(message, now)
      : { ...queued, mode: 'followup', enqueuedAt: now, debounceMs: 0, maxWaitMs: 0 };
  };
}

/**
 * The queue items behind the steer messages this session handed to its runs (`steerMessageOf`), by identity: the
 * run hands the same objects back when it never admitted them.
 */
const steeredItems = new WeakMap<SteerMessage, QueuedMessage>();

/** The queue item behind a steer message this session handed to its run. */
function queuedOf(message: SteerMessage): QueuedMessage | undefined {
  return steeredItems.get(message);
}

/**
 * The steer message for a queue item: the text the model sees (with the sender's line when attributed); a message
 * with a role keeps its item, so a steer the run never admitted returns to the queue with its sender and role.
 */
export function steerMessageOf(item: QueuedMessage): SteerMessage {
  const { parts } = item;
  const text = item.attribute === true && item.role !== undefined ? attributedText(item) : item.text;
  const steered: SteerMessage = {
    messageId: item.messageId,
    text,
    ...(parts === undefined ? {} : { parts }),
  };
  if (item.role !== undefined) steeredItems.set(steered, item);
  return steered;
}

function attributedText(item: QueuedMessage): string {
  const sender = { id: item.senderId, name: item.senderName, role: item.role ?? '' };
  return attributeMessage(item.text, sender);
}

function plainItem(message: SteerMessage, now: number): QueuedMessage {
  return {
    messageId: message.messageId,
    text: message.text,
    mode: 'followup',
    enqueuedAt: now,
    debounceMs: 0,
    maxWaitMs: 0,
    ...(message.parts === undefined ? {} : { parts: message.parts }),
  };
}

/** Only approvals were settled; the pause now waits for tool results alone. */
export function awaitToolResults(context: SessionContext): SessionContext {
  return context.pause === null
    ? context
    : { ...context, pause: { ...context.pause, state: 'awaiting_tool_results' } };
}

/** The session's plan runs not ended yet (none in a snapshot from before plans were held). */
export function heldPlans(context: SessionContext): readonly PlanHold[] {
  return context.plans ?? [];
}

/**
 * The plan run of the session that waits for approval, if any: the machine's paused run when it is a plan (its
 * calls are the steps), else a plan that reported its pause and that the machine has not adopted yet.
 */
export function pausedPlanOf(context: SessionContext): PlanHold | undefined {
  const { run, pause } = context;
  if (run?.kind === 'plan' && pause !== null) {
    const steps = pause.calls.map((call) => ({
      stepId: call.toolCallId,
      tool: call.tool,
      approvalId: call.approvalId ?? call.toolCallId,
    }));
    return { runId: run.runId, state: 'awaiting_approval', steps };
  }
  return heldPlans(context).find((plan) => plan.state === 'awaiting_approval');
}

/**
 * A plan that paused (PLAN.PAUSED, or restored paused) becomes the machine's paused run: its steps are the calls
 * it waits for, until `approvePlan` resumes it or an abort or interrupting message ends it. A plan pause does not
 * expire (`until` is only what the pause states read).
 */
export function adoptPausedPlan(context: SessionContext, now: number): SessionContext {
  const hold = heldPlans(context).find((plan) => plan.state === 'awaiting_approval');
  if (hold === undefined) return context;
  const run = {
    runId: hold.runId,
    kind: 'plan' as const,
    prompt: '',
    messageIds: [],
    consumedAs: 'consumed' as const,
    startedAt: now,
    items: [],
  };
  const calls = hold.steps.map((step, position) => ({
    toolCallId: step.stepId,
    approvalId: step.approvalId ?? step.stepId,
    tool: step.tool,
    needs: 'approval' as const,
    turn: 0,
    position,
    settled: false,
  }));
  const pause = { state: 'awaiting_approval' as const, calls, until: now };
  return { ...releasePlan(context, hold.runId), run, pause };
}

/** An `approvePlan` resumes the session's paused plan run: it runs again, with the job that continues it. */
export function resumePlan(context: SessionContext, job: string): SessionContext {
  const { run } = context;
  if (run === null) return context;
  return { ...context, run: { ...run, job, resume: { from: 'awaiting_approval' } }, pause: null };
}

/** A plan run was submitted or resumed: it holds the session (running) until it pauses or ends. */
export function holdPlan(context: SessionContext, runId: string): SessionContext {
  const others = heldPlans(context).filter((plan) => plan.runId !== runId);
  const known = heldPlans(context).some((plan) => plan.runId === runId);
  const running: PlanHold = { runId, state: 'running', steps: [] };
  const plans = known
    ? heldPlans(context).map((plan) => (plan.runId === runId ? running : plan))
    : [...others, running];
  return { ...context, plans };
}

/** A plan run paused for approval of `steps`: it keeps holding the session. */
export function pausePlan(
  context: SessionContext,
  runId: string,
  steps: readonly PlanStepWait[],
): SessionContext {
  const paused: PlanHold = { runId, state: 'awaiting_approval', steps };
  const known = heldPlans(context).some((plan) => plan.runId === runId);
  const plans = known
    ? heldPlans(context).map((plan) => (plan.runId === runId ? paused : plan))
    : [...heldPlans(context), paused];
  return { ...context, plans };
}

/** A plan run ended (or never ran): it no longer holds the session. */
export function releasePlan(context: SessionContext, runId: string): SessionContext {
  const plans = heldPlans(context).filter((plan) => plan.runId !== runId);
  return plans.length === heldPlans(context).length ? context : { ...context, plans };
}

/** A paused plan as `waitForEnd()` waiters are told: its steps are the calls it waits for. */
export function planPaused(runId: string, steps: readonly PlanStepWait[], at: number): RunPaused {
  return {
    runId,
    state: 'awaiting_approval',
    calls: steps.map((step, position) => ({
      toolCallId: step.stepId,
      approvalId: step.approvalId ?? step.stepId,
      tool: step.tool,
      needs: 'approval',
      turn: 0,
      position,
    })),
    at,
  };
}

/** The context after a PLAN.* event (any other event changes nothing). */
export function applyPlanEvent(context: SessionContext, event: SessionEvent): SessionContext {
  if (event.type === 'PLAN.HELD') return holdPlan(context, event.runId);
  if (event.type === 'PLAN.PAUSED') return pausePlan(context, event.runId, event.steps);
  return event.type === 'PLAN.ENDED' ? releasePlan(context, event.runId) : context;
}

/** What `waitForEnd()` callers are answered when a plan run pauses or ends. */
export function planStoppedResult(event: SessionEvent): RunResult | undefined {
  if (event.type === 'PLAN.PAUSED') return planPaused(event.runId, event.steps, event.at);
  return event.type === 'PLAN.ENDED' ? event.summary : undefined;
}

/**
 * How an abort or an interrupting message ends the plan runs the session holds (`endPlans` runs on an ADMIT only
 * when the message interrupts).
 */
export function planEnding(event: SessionEvent): { status: AbortStatus; reason: string } | undefined {
  if (event.type === 'ABORT') return { status: event.status, reason: event.reason };
  if (event.type === 'ADMIT') return { status: 'interrupted', reason: 'interrupted by a new message' };
  return undefined;
}

/** The plan holds a saved snapshot recorded, its paused plan run first (none when it is no session snapshot). */
function savedPlans(snapshot: unknown): readonly PlanHold[] {
  if (typeof snapshot !== 'object' || snapshot === null || !('context' in snapshot)) return [];
  const context = snapshot.context as Partial<SessionContext> | null;
  const plans: unknown = context?.plans;
  const held = Array.isArray(plans) ? (plans as PlanHold[]) : [];
  const { run, pause } = context ?? {};
  if (run?.kind !== 'plan' || pause === null || pause === undefined) return held;
  const paused = pausedPlanOf({ ...(context as SessionContext), plans: [] });
  return paused === undefined ? held : [paused, ...held];
}

/** The steps a paused plan waits for, from its latest `run.paused` event (tools and ids from its approval requests). */
export async function stepsFromEvents(
  ledger: Ledger,
  sessionKey: string,
  runId: string,
): Promise<PlanStepWait[]> {
  const events = (await ledger.readEvents({ sessionKey })).filter((event) => event.runId === runId);
  const requests = new Map<string, PlanStepWait>();
  let waiting: readonly string[] = [];
  for (const event of events) {
    if (event.type === 'approval.requested') {
      const { toolCallId: stepId, tool, approvalId = stepId } = event;
      requests.set(stepId, { stepId, tool, approvalId });
    }
    if (event.type === 'run.paused') waiting = event.toolCallIds;
  }
  return waiting.map((stepId) => requests.get(stepId) ?? { stepId, tool: '', approvalId: stepId });
}

/**
 * What hydrating a session reads from the ledger, with the paused plan run it holds (if any) and the run a crash
 * cut that it resumes (if any).
 */
export type HydrateState = SessionState & {
  readonly plan?: PlanHold | undefined;
  readonly resume?: RunRecord | undefined;
};

/**
 * The paused plan run a hydrated session holds, when the ledger's latest paused run of the session is a plan
 * (no agent run's calls wait): what it waits for comes from the saved snapshot, or, when the snapshot is older
 * than the pause (a crash before it was written), from the plan's recorded events.
 */
export async function pausedPlanToRestore(
  ledger: Ledger,
  sessionKey: string,
  state: SessionState,
): Promise<PlanHold | undefined> {
  const paused = state.paused;
  if (paused === undefined || paused.run.provider !== 'plan' || paused.run.status !== 'awaiting_approval')
    return undefined;
  if (paused.calls.some((call) => call.kind !== 'ran')) return undefined;
  const { runId } = paused.run;
  const saved = savedPlans(state.record?.snapshot).find(
    (plan) => plan.runId === runId && plan.state === 'awaiting_approval',
  );
  if (saved !== undefined) return saved;
  return { runId, state: 'awaiting_approval', steps: await stepsFromEvents(ledger, sessionKey, runId) };
}
