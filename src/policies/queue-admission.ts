import type { Disposition, PauseState } from '../core/index.js';
import type { QueueSettings } from './queue-settings.js';
import { decideCap } from './queue-cap.js';

/** How long an accepted message id is remembered for redelivery checks (5 minutes). */
export const dedupeWindowMs = 5 * 60_000;

/**
 * Most ids remembered per session: the window is 5 minutes or the latest 1000 ids, whichever is shorter, so a
 * very busy session's snapshot and per-message cost stay bounded.
 */
export const dedupeMaxIds = 1000;

/** An accepted message id and when it was accepted (ms); plain data, so it fits a persisted snapshot. */
export type SeenMessage = readonly [messageId: string, acceptedAt: number];

/** True when `messageId` was accepted less than `windowMs` before `now`. */
export function isDuplicate(
  seen: readonly SeenMessage[],
  messageId: string,
  now: number,
  windowMs = dedupeWindowMs,
): boolean {
  // Newest first: a redelivery is usually recent.
  for (let index = seen.length - 1; index >= 0; index--) {
    const entry = seen[index] as SeenMessage;
    if (entry[0] === messageId) return now - entry[1] < windowMs;
  }
  return false;
}

/**
 * A new list with expired entries (and any older entry for this id) pruned, `messageId` appended, and at most
 * `maxIds` entries kept (the oldest go first). Entries are kept in acceptance order, so the expired ones are a
 * prefix; the kept entries are shared, not copied (this runs for every message).
 */
export function rememberMessage(
  seen: readonly SeenMessage[],
  messageId: string,
  now: number,
  windowMs = dedupeWindowMs,
  maxIds = dedupeMaxIds,
): SeenMessage[] {
  let start = Math.max(0, seen.length + 1 - maxIds);
  while (start < seen.length && now - (seen[start] as SeenMessage)[1] >= windowMs) start++;
  const kept = seen.slice(start);
  const previous = kept.findIndex((entry) => entry[0] === messageId);
  if (previous >= 0) kept.splice(previous, 1);
  kept.push([messageId, now]);
  return kept;
}

/** The dispositions of a message that waits in the queue. */
type QueuedDisposition = Extract<Disposition, 'queued' | 'collected'>;

/**
 * What the session is doing when a message arrives: `idle` (nothing queued), `waiting` (idle, a queue waits for
 * its drain), or the active run's phase.
 */
export type SessionActivity =
  'idle' | 'waiting' | 'starting' | 'streaming' | 'tools' | 'compacting' | 'settling' | PauseState;

/** What happens to an arriving message. */
export type Admission =
  | { readonly kind: 'start' }
  | { readonly kind: 'steer'; readonly alsoQueue: false }
  | {
      readonly kind: 'steer';
      readonly alsoQueue: true;
      readonly dropOldest: boolean;
      readonly summarize: boolean;
    }
  | {
      readonly kind: 'enqueue';
      readonly disposition: QueuedDisposition;
      readonly dropOldest: boolean;
      readonly summarize: boolean;
    }
  | { readonly kind: 'interrupt' }
  | { readonly kind: 'reject'; readonly code: 'rejected_busy' | 'queue_full' };

/** True while a steer message can still reach the run at a boundary (before a model call or a tool launch). */
export function isSteerable(activity: SessionActivity): boolean {
  return activity === 'starting' || activity === 'streaming' || activity === 'tools';
}

/** True when a run is active (in any phase or paused). */
export function isRunActive(activity: SessionActivity): boolean {
  return activity !== 'idle' && activity !== 'waiting';
}

function enqueue(disposition: QueuedDisposition, queueLength: number, settings: QueueSettings): Admission {
  const cap = decideCap(queueLength, settings);
  if (!cap.accept) return { kind: 'reject', code: cap.code };
  return { kind: 'enqueue', disposition, dropOldest: cap.drop === 1, summarize: cap.summarize };
}

/**
 * Decide what an arriving message does, from the session's activity, its queue length and the message's
 * resolved settings (docs/semantics.md, "Queue modes"). A session with a queue waiting to drain counts as busy,
 * so a newcomer never jumps ahead of messages that arrived before it.
 */
export function decideAdmission(
  activity: SessionActivity,
  queueLength: number,
  settings: QueueSettings,
): Admission {
  if (activity === 'idle') return { kind: 'start' };
  switch (settings.mode) {
    case 'steer':
      return isSteerable(activity)
        ? { kind: 'steer', alsoQueue: false }
        : enqueue('queued', queueLength, settings);
    case 'steer-backlog': {
      const queued = enqueue('queued', queueLength, settings);
      if (!isSteerable(activity) || queued.kind !== 'enqueue') return queued;
      return { kind: 'steer', alsoQueue: true, dropOldest: queued.dropOldest, summarize: queued.summarize };
    }
    case 'followup':
      return enqueue('queued', queueLength, settings);
    case 'collect':
      return enqueue('collected', queueLength, settings);
    case 'interrupt':
      return { kind: 'interrupt' };
    case 'reject':
      return { kind: 'reject', code: 'rejected_busy' };
  }
}
