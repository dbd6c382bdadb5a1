import {
  summarizeMessage,
  dropSummaryLimit,
  decideAdmission,
  type Admission,
  type SessionActivity,
  type QueueSettings,
} from '../policies/index.js';
import { RuntimeError } from '../core/index.js';
import type { SessionActor } from './session-machine.js';
import {
  type Admitted,
  type AdmissionPreviewed,
  type SessionContext,
  type SessionEvent,
  accept,
  beginRun,
  drainAtFor,
  enqueue,
} from './session-context.js';
import { continueRun, pausedPlanOf } from './session-pause.js';
import { phaseOf, startingAfter } from './session-runs.js';

/** The ADMIT event: a message whose inbox record is durable. */
export type AdmitEvent = Extract<SessionEvent, { type: 'ADMIT' }>;

/** A decision the machine applies: a durable message is never refused. */
export type AppliedAdmission = Exclude<Admission, { kind: 'reject' }>;

/**
 * Where a session stands, in one vocabulary (docs/architecture.md, "Where a session stands"): its **place** is the
 * session machine's state as the machine names it (`idle` for idle.empty and idle.check, `held` while a plan run a
 * crash cut holds the idle session); its **activity** (`SessionActivity`, what admission decides with) is read from
 * the place and the context (`activityIn`); its **state** (`SessionState`, what `status()` reports) from the
 * activity (`stateOf`).
 */
export type SessionPlace =
  'idle' | 'waiting' | 'held' | 'running' | 'awaiting_approval' | 'awaiting_tool_results';

/** How admission changes the context at a place: idle, with a run running, or with a run paused. */
export type AdmitSide = 'idle' | 'running' | 'paused';

/** What the session is doing at `place`: the one reading, for admission and for `status()` alike. */
export function activityIn(place: SessionPlace, context: SessionContext): SessionActivity {
  switch (place) {
    case 'idle':
    case 'waiting':
    case 'awaiting_approval':
    case 'awaiting_tool_results':
      return place;
    case 'running': {
      // A plan run that reported its pause reads as paused before the machine adopts it.
      const { run } = context;
      if (run?.kind === 'plan' && pausedPlanOf(context)?.runId === run.runId) return 'awaiting_approval';
      return phaseOf(run);
    }
    case 'held':
      return pausedPlanOf(context) === undefined ? 'settling' : 'awaiting_approval';
  }
}

/** The side of a place admission changes the context on. */
export function sideOf(place: SessionPlace): AdmitSide {
  if (place === 'running') return 'running';
  return place === 'awaiting_approval' || place === 'awaiting_tool_results' ? 'paused' : 'idle';
}

/** The inbox status a decision records: a message steered into the run (and not also queued) is `steered`. */
export function statusOf(admission: Admission): 'steered' | 'pending' {
  return admission.kind === 'steer' && !admission.alsoQueue ? 'steered' : 'pending';
}

/** True when a message of `role` may be steered into `run`: every message of the run has that same role. */
function joinsRun(run: SessionContext['run'], role: string | undefined): boolean {
  return run === null || run.items.every((item) => item.role === role);
}

/**
 * What an arriving message of sender role `role` does in `activity` with the session's queue: the pure policy (may
 * refuse it). A steer into a run of another authority becomes a followup: a run never takes in a message of
 * authority other than its own.
 */
export function admissionIn(
  activity: SessionActivity,
  context: SessionContext,
  settings: QueueSettings,
  role?: string,
): Admission {
  const admission = decideAdmission(activity, context.queue.length, settings);
  if (admission.kind !== 'steer' || joinsRun(context.run, role)) return admission;
  return decideAdmission(activity, context.queue.length, { ...settings, mode: 'followup' });
}

/**
 * The decision for a durable message, fitted to the status its record was written with (`recorded`): a durable
 * message is never refused, and a message recorded `pending` is queued rather than only steered (a steer that no
 * turn admits would run again after a restart). A record written `steered` that ends up queued is fine: the ledger
 * runs steered messages no turn admitted.
 */
export function durableAdmissionIn(
  activity: SessionActivity,
  context: SessionContext,
  settings: QueueSettings,
  recorded: 'steered' | 'pending',
  role?: string,
): AppliedAdmission {
  let admission = admissionIn(activity, context, settings, role);
  if (recorded === 'pending' && statusOf(admission) === 'steered')
    admission = admissionIn(activity, context, { ...settings, mode: 'followup' }, role);
  if (admission.kind !== 'reject') return admission;
  const disposition = settings.mode === 'collect' ? 'collected' : 'queued';
  return { kind: 'enqueue', disposition, dropOldest: false, summarize: false };
}

/**
 * The decision for a message ADMIT brings at `place`: what the machine's guards and actions use. A
 * durable message (`recorded`) is never refused; a preview (no `recorded`) may be.
 */
export function admissionOf(place: SessionPlace, context: SessionContext, event: AdmitEvent): Admission {
  const { role } = event.item;
  const current = activityIn(place, context);
  if (event.recorded === undefined) return admissionIn(current, context, event.settings, role);
  return durableAdmissionIn(current, context, event.settings, event.recorded, role);
}

/** What a preview of ADMIT emits: the decision on a message not written yet (the status to record, or a refusal). */
export function previewOf(
  place: SessionPlace,
  context: SessionContext,
  event: AdmitEvent,
): AdmissionPreviewed {
  return {
    type: 'admission.previewed',
    messageId: event.item.messageId,
    admission: admissionOf(place, context, event),
  };
}

/** The oldest queued message the decision drops for the cap, and its summary when the cap summarizes. */
function droppedBy(admission: AppliedAdmission, context: SessionContext): Admitted['dropped'] {
  const dropsOldest = 'dropOldest' in admission && admission.dropOldest;
  const oldest = dropsOldest ? context.queue[0] : undefined;
  if (oldest === undefined) return undefined;
  const summarize = 'summarize' in admission && admission.summarize;
  return { messageId: oldest.messageId, summary: summarize ? summarizeMessage(oldest.text) : null };
}

/** Queue the message at the back (the cap may drop the oldest); an idle session sets its drain deadline. */
function queueMessage(
  context: SessionContext,
  event: AdmitEvent,
  admission: AppliedAdmission,
  side: AdmitSide,
): SessionContext {
  const dropped = droppedBy(admission, context);
  const accepted = accept(context, event.item.messageId, event.at, event.remember);
  const item = admission.kind === 'steer' ? { ...event.item, mode: 'followup' as const } : event.item;
  const summary = dropped?.summary ?? null;
  const next = enqueue(accepted, item, dropped !== undefined, summary, dropSummaryLimit);
  return side === 'idle' ? { ...next, drainAt: drainAtFor(next, event.at) } : next;
}

/**
 * Put an interrupting message at the head of the queue. Idle, it drains at once; with a run, it runs as soon as the
 * interrupted run ends (until `waitMs`); a paused run only ends (its lane turn records the end).
 */
function interrupt(context: SessionContext, event: AdmitEvent, side: AdmitSide): SessionContext {
  const accepted = accept(context, event.item.messageId, event.at, event.remember);
  const queue = [event.item, ...context.queue];
  if (side === 'idle') return { ...accepted, queue, interruptUntil: event.at, drainAt: event.at };
  const next = { ...accepted, queue, lastEnqueuedAt: event.at, interruptUntil: event.at + event.waitMs };
  return side === 'running'
    ? next
    : continueRun(next, { status: 'interrupted', reason: 'interrupted by a new message' });
}

/** The context after admission changed it, before the outcome is recorded. */
function changedBy(
  context: SessionContext,
  event: AdmitEvent,
  admission: AppliedAdmission,
  side: AdmitSide,
  runId: () => string,
): SessionContext {
  switch (admission.kind) {
    case 'start': {
      const accepted = accept(context, event.item.messageId, event.at, event.remember);
      return beginRun(accepted, runId(), [event.item], event.at);
    }
    case 'steer':
      return admission.alsoQueue
        ? queueMessage(context, event, admission, side)
        : accept(context, event.item.messageId, event.at, event.remember);
    case 'enqueue':
      return queueMessage(context, event, admission, side);
    case 'interrupt':
      return interrupt(context, event, side);
  }
}

/** What `send()` answers for a decision, before a drain may take the message into a run. */
function dispositionOf(admission: AppliedAdmission): Admitted['disposition'] {
  switch (admission.kind) {
    case 'start':
      return 'started';
    case 'steer':
      return 'steered';
    case 'interrupt':
      return 'interrupted';
    case 'enqueue':
      return admission.disposition;
  }
}

/** Where the message stands in `context`: its queue position, or the run it is in (or was steered into). */
function standing(context: SessionContext, messageId: string, steered: boolean) {
  const index = context.queue.findIndex((queued) => queued.messageId === messageId);
  const inRun = context.run?.messageIds.includes(messageId) === true;
  const runId = steered || inRun ? context.run?.runId : undefined;
  return {
    ...(index < 0 ? {} : { position: index + 1 }),
    ...(runId === undefined ? {} : { runId }),
    inRun,
  };
}

/**
 * Apply the decision for a durable message ADMIT brings at `place`: the next context, and
 * the outcome the machine emits (`message.admitted`). `runId` names a run the message starts (unless the event
 * names it: see ADMIT's `runId`).
 */
export function applyAdmission(
  context: SessionContext,
  event: AdmitEvent,
  place: SessionPlace,
  runId: () => string,
): { readonly next: SessionContext; readonly outcome: Admitted } {
  const admission = admissionOf(place, context, event);
  if (admission.kind === 'reject')
    throw new RuntimeError('internal', `session "${context.sessionKey}" refused a durable message`);
  const dropped = droppedBy(admission, context);
  // A message admitted on its session's rows was answered with the id of the run it starts before the actor ran.
  const { runId: chosen } = event;
  const next = changedBy(
    context,
    event,
    admission,
    sideOf(place),
    chosen === undefined ? runId : () => chosen,
  );
  const { messageId } = event.item;
  const { inRun, ...where } = standing(next, messageId, admission.kind === 'steer');
  const disposition = inRun && admission.kind !== 'steer' ? 'started' : dispositionOf(admission);
  const outcome: Admitted = {
    messageId,
    kind: admission.kind,
    disposition,
    ...where,
    ...(dropped === undefined ? {} : { dropped }),
  };
  return { next, outcome };
}

/**
 * The session machine's decision on a message not written yet: the machine selects the transition its ADMIT would
 * take on the session as it is now (xstate's `getTransitionData`: state and guards, nothing runs, nothing changes);
 * an ADMIT without a recorded status selects the state's `preview` transition, whose decision is the one its
 * `admits` guards make (`admissionOf` at the state's place), here allowed to refuse. It says the status to
 * record, or refuses. The machine decides again on the real ADMIT once the record is durable, with the same guards.
 * (`transition()` would build a throwaway actor per call: about a tenth of the message path.)
 */
export function previewAdmission(actor: SessionActor, admit: AdmitEvent): Admission {
  const snapshot = actor.getSnapshot();
  for (const selected of actor.logic.getTransitionData(snapshot, admit)) {
    for (const action of selected.actions) {
      const place = previewPlaceOf(action);
      if (place !== undefined) return admissionOf(place, snapshot.context, admit);
    }
  }
  throw new RuntimeError(
    'internal',
    `session "${snapshot.context.sessionKey}" made no decision on a message`,
  );
}

/** The place a state's `preview` action decides at (undefined for any other action). */
function previewPlaceOf(action: unknown): SessionPlace | undefined {
  if (typeof action !== 'object' || action === null || !('type' in action) || action.type !== 'preview')
    return undefined;
  const params = 'params' in action ? (action.params as { place?: SessionPlace } | undefined) : undefined;
  return params?.place;
}

/**
 * Send a durable message's ADMIT and take the outcome the machine emits for it (`message.admitted`); a drain that
 * took the message into a run in the same step (`run.taken`) makes it `started` in that run. `announce` tells the
 * outcome before a run the message starts begins (its `message.received` comes before the run's `run.started`).
 */
export function admitInto(
  actor: SessionActor,
  admit: AdmitEvent,
  announce: (admitted: Admitted) => void = () => undefined,
): Admitted {
  return startingAfter(actor, () => admitStep(actor, admit), announce);
}

/** The ADMIT step of `admitInto`: send it and take its outcome from what the machine emits. */
function admitStep(actor: SessionActor, admit: AdmitEvent): Admitted {
  const { messageId } = admit.item;
  let outcome: Admitted | undefined;
  const admitted = actor.on('message.admitted', (event) => {
    if (event.outcome.messageId === messageId) outcome = event.outcome;
  });
  const taken = actor.on('run.taken', ({ runId, messageIds }) => {
    if (outcome === undefined || outcome.runId !== undefined || !messageIds.includes(messageId)) return;
    const { position: _queued, ...rest } = outcome;
    outcome = { ...rest, disposition: 'started', runId };
  });
  try {
    actor.send(admit);
  } finally {
    admitted.unsubscribe();
    taken.unsubscribe();
  }
  if (outcome === undefined)
    throw new RuntimeError(
      'internal',
      `session "${actor.getSnapshot().context.sessionKey}" did not admit message "${messageId}"`,
    );
  return outcome;
}
