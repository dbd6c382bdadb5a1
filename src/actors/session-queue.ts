import { composeMessageText, inlineAttachmentsOf } from '../policies/index.js';
import { buildCollectPrompt, buildDroppedNotice, takeCollectBatch } from '../policies/index.js';
import { attributeMessage } from '../policies/index.js';
import { rememberMessage } from '../policies/index.js';
import { drainDueAt } from '../policies/index.js';
import { keepDropSummary } from '../policies/index.js';
import type { SteerMessage } from '../runner/index.js';
import type { ActiveRun, QueuedMessage, SessionContext } from './session-context.js';

/**
 * Take a newly accepted message's arrival rank and, when it came with a platform id (`remember`), record the id
 * for the dedupe window. Ids the runtime generated can never be redelivered, so they are not remembered.
 */
export function accept(
  context: SessionContext,
  messageId: string,
  at: number,
  remember: boolean,
): SessionContext {
  const seen = remember ? rememberMessage(context.seen, messageId, at) : context.seen;
  return { ...context, seen, nextOrder: context.nextOrder + 1 };
}

/**
 * Put a message at the back of the queue, dropping the oldest first when the cap says so; the dropped message's
 * summary is kept, at most `summaryLimit` of them (the rest are counted).
 */
export function enqueue(
  context: SessionContext,
  item: QueuedMessage,
  dropOldest: boolean,
  summary: string | null,
  summaryLimit: number,
): SessionContext {
  const queue = dropOldest ? context.queue.slice(1) : context.queue;
  const next = { ...context, queue: [...queue, item], lastEnqueuedAt: item.enqueuedAt };
  if (summary === null) return next;
  const kept = keepDropSummary(
    { kept: context.dropped, omitted: context.droppedOmitted ?? 0 },
    summary,
    summaryLimit,
  );
  return { ...next, dropped: kept.kept, droppedOmitted: kept.omitted };
}

/** When the queue drains: at once for an interrupting message in time, else debounce capped by maxWait. */
export function drainAtFor(context: SessionContext, now: number): number | null {
  const head = context.queue[0];
  const last = context.queue[context.queue.length - 1];
  if (head === undefined || last === undefined) return null;
  if (head.mode === 'interrupt' && context.interruptUntil !== null && now <= context.interruptUntil)
    return now;
  return drainDueAt({
    lastEnqueuedAt: context.lastEnqueuedAt ?? now,
    runEndedAt: context.runEndedAt ?? now,
    debounceMs: last.debounceMs,
    maxWaitMs: last.maxWaitMs,
  });
}

/**
 * The text the model sees for one message: with `attribute`, a line the runtime writes naming the sender and role,
 * then the message escaped so that no line of it passes for such a line (docs/semantics.md, "Authority in group
 * chats").
 */
export function messageTextFor(item: QueuedMessage): string {
  const text = composeMessageText(item.text, item.parts);
  if (item.attribute !== true || item.role === undefined) return text;
  return attributeMessage(text, { id: item.senderId, name: item.senderName, role: item.role });
}

function promptFor(items: readonly QueuedMessage[], dropped: readonly string[], omitted: number): string {
  const texts = items.map((item) => ({ text: messageTextFor(item) }));
  const first = texts[0] as { text: string };
  if (items.length > 1) return buildCollectPrompt(texts, { dropped, droppedOmitted: omitted });
  const notice = buildDroppedNotice(dropped, omitted);
  return notice === '' ? first.text : `${notice}\n\n${first.text}`;
}

/**
 * Take the next run off the queue: a collect-mode head takes every leading collect message it can merge with
 * (same channel, thread and sender role) as ONE run; any other head runs alone.
 */
export function takeNextRun(context: SessionContext, runId: string, now: number): SessionContext {
  const head = context.queue[0];
  if (head === undefined) return context;
  let items: QueuedMessage[] = [head];
  if (head.mode === 'collect') {
    const leading: QueuedMessage[] = [];
    for (const item of context.queue) {
      if (item.mode !== 'collect') break;
      leading.push(item);
    }
    items = takeCollectBatch(leading).batch;
  }
  return beginRun({ ...context, queue: context.queue.slice(items.length) }, runId, items, now);
}

/** Make `items` the active run (the dropped-message notice goes into its prompt). */
export function beginRun(
  context: SessionContext,
  runId: string,
  items: readonly QueuedMessage[],
  now: number,
): SessionContext {
  const attachments = items.flatMap((item) => inlineAttachmentsOf(item.parts));
  const run: ActiveRun = {
    runId,
    prompt: promptFor(items, context.dropped, context.droppedOmitted ?? 0),
    ...(attachments.length === 0 ? {} : { attachments }),
    messageIds: items.map((item) => item.messageId),
    consumedAs: items.length > 1 ? 'collected' : 'consumed',
    startedAt: now,
    items,
    ...(context.preferredProfile === null ? {} : { preferredProfile: context.preferredProfile }),
  };
  return { ...context, run, dropped: [], droppedOmitted: 0, drainAt: null, interruptUntil: null };
}

/**
 * A run ended: steer messages it never admitted go back to the front of the queue as followups (never lost),
 * and the drain deadline is set.
 */
export function endRun(
  context: SessionContext,
  unadmitted: readonly SteerMessage[],
  toItem: (message: SteerMessage) => QueuedMessage,
  now: number,
): SessionContext {
  const returned = unadmitted.map(toItem);
  const queue = returned.length > 0 ? [...returned, ...context.queue] : context.queue;
  const ended: SessionContext = { ...context, run: null, queue, runEndedAt: now };
  return { ...ended, drainAt: drainAtFor(ended, now) };
}

/** How long the drain waits before it retries a run that could not start. */
export const startRetryDelayMs = 1000;

/** A run that could not start: its messages go back to the front of the queue, in order, and the drain retries. */
export function returnRun(context: SessionContext, now: number): SessionContext {
  if (context.run === null) return context;
  return {
    ...context,
    run: null,
    queue: [...context.run.items, ...context.queue],
    runEndedAt: now,
    interruptUntil: null,
    drainAt: now + startRetryDelayMs,
  };
}

/** Remove messages from the queue (cancel / clear). */
export function removeQueued(context: SessionContext, messageIds: readonly string[]): SessionContext {
  const removing = new Set(messageIds);
  const queue = context.queue.filter((item) => !removing.has(item.messageId));
  return { ...context, queue, drainAt: queue.length === 0 ? null : context.drainAt };
}
