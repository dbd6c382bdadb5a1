import type { Disposition } from '../core/index.js';
import type { PauseState } from '../core/index.js';
import type { QueueSettings } from './queue-settings.js';
import { decideCap } from './queue-cap.js';

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
