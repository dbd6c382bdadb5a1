import type { InboxRecord, SessionState } from '../ledger/index.js';
import { dedupeMaxIds, dedupeWindowMs, type SeenMessage } from '../policies/index.js';
import { initialSessionContext, type QueuedMessage, type SessionContext } from './session-context.js';

/** Drain timing for messages the snapshot did not know (accepted after it was taken). */
export interface ReconcileDefaults {
  readonly debounceMs: number;
  readonly maxWaitMs: number;
  /** How long a paused run waits when the snapshot did not record its deadline. */
  readonly pauseTimeoutMs: number;
  /** Whether the model sees who said what (the `authority` option's attribution). @default false */
  readonly attribution?: boolean;
}

function itemOf(record: InboxRecord, defaults: ReconcileDefaults): QueuedMessage {
  return {
    messageId: record.messageId,
    text: record.text,
    mode: record.mode === 'collect' ? 'collect' : 'followup',
    enqueuedAt: record.acceptedAt,
    debounceMs: defaults.debounceMs,
    maxWaitMs: defaults.maxWaitMs,
    ...(record.senderId === undefined ? {} : { senderId: record.senderId }),
    ...(record.senderName === undefined ? {} : { senderName: record.senderName }),
    // The message's own authority, as it was admitted (a run never gets more than its messages had).
    ...(record.senderRole === undefined ? {} : { role: record.senderRole }),
    ...(defaults.attribution === true && record.senderRole !== undefined ? { attribute: true } : {}),
    ...(record.channel === undefined ? {} : { channel: record.channel }),
    ...(record.thread === undefined ? {} : { thread: record.thread }),
    ...(record.parts === undefined ? {} : { parts: record.parts }),
  };
}

/** The dedupe window from the snapshot and the inbox's latest ids together: the newest time per id, in time order. */
function mergeSeen(
  saved: readonly SeenMessage[],
  recent: readonly SeenMessage[],
  now: number,
): SeenMessage[] {
  const latest = new Map<string, number>();
  for (const [id, at] of [...saved, ...recent]) latest.set(id, Math.max(at, latest.get(id) ?? at));
  return [...latest]
    .filter(([, at]) => now - at < dedupeWindowMs)
    .sort((a, b) => a[1] - b[1])
    .slice(-dedupeMaxIds);
}

/**
 * The context a session resumes with. The inbox is the truth about what is still to run: the snapshot may
 * lag behind it (a crash between accepting a message and persisting the session). Queued messages keep their
 * snapshot entry (mode, timing) when there is one and take the inbox's arrival order; a message only the inbox
 * knows is queued with the defaults. The dedupe window also takes the inbox's latest ids. Numbering continues after what the ledger recorded. A queue the snapshot
 * had no deadline for drains at once.
 */
export function reconcileContext(
  sessionKey: string,
  saved: SessionContext | undefined,
  state: SessionState,
  defaults: ReconcileDefaults,
  now: number,
): SessionContext {
  const base = saved ?? initialSessionContext(sessionKey);
  const known = new Map(base.queue.map((item) => [item.messageId, item]));
  const queue = state.pending.map((record) => known.get(record.messageId) ?? itemOf(record, defaults));
  const interrupting = queue.filter((item) => item.mode === 'interrupt');
  const ordered =
    interrupting.length === 0
      ? queue
      : [...interrupting, ...queue.filter((item) => item.mode !== 'interrupt')];
  const drainAt = ordered.length === 0 ? null : (base.drainAt ?? now);
  return {
    ...base,
    seen: mergeSeen(base.seen, state.recent, now),
    queue: ordered,
    run: null,
    pause: null,
    plans: [],
    nextOrder: Math.max(base.nextOrder, state.lastOrder + 1),
    drainAt,
  };
}
