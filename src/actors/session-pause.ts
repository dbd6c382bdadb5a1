import { attributeMessage } from '../policies/index.js';
import type { AbortStatus } from '../runner/index.js';
import type { SteerMessage } from '../runner/index.js';
import type { RunPaused } from '../runner/index.js';
import type { QueuedMessage, SessionContext } from './session-context.js';

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
export function settlePausedCall(context: SessionContext, turn: number, position: number): SessionContext {
  const { pause } = context;
  if (pause === null) return context;
  const calls = pause.calls.map((call) =>
    call.turn === turn && call.position === position ? { ...call, settled: true } : call,
  );
  return { ...context, pause: { ...pause, calls } };
}

/** Calls of the pause still waiting for `needs` (any when omitted). */
export function waitingCalls(context: SessionContext, needs?: 'approval' | 'deferred'): number {
  return (context.pause?.calls ?? []).filter(
    (call) => !call.settled && (needs === undefined || call.needs === needs),
  ).length;
}

/**
 * The paused run continues (every call settled, or the pause expired), or, with `abort`, only ends: its lane
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
