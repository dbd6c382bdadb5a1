import type { QueuedMessage } from './session-context.js';
import type { LiveSession } from './session-registry.js';
import { RuntimeError } from '../core/index.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';

/** A queued message as `queue.list()` shows it. */
export interface QueueItem {
  readonly messageId: string;
  readonly text: string;
  readonly mode: QueuedMessage['mode'];
  readonly enqueuedAt: number;
}

/** A session's pending queue. */
export interface SessionQueue {
  /** The queued messages, in the order they will run. */
  list(): QueueItem[];
  /** Remove one queued message; resolves whether it was queued. */
  cancel(messageId: string): Promise<boolean>;
  /** Remove every queued message; resolves how many were removed. */
  clear(): Promise<number>;
}

function remove(
  internals: RuntimeInternals,
  live: LiveSession,
  messageIds: readonly string[],
  reason: 'cancelled' | 'cleared',
) {
  if (messageIds.length === 0) return Promise.resolve();
  live.actor.send({ type: 'CANCEL', messageIds });
  for (const messageId of messageIds) internals.emit(live, { type: 'message.dropped', messageId, reason });
  return internals.services.ledger.updateMessages(live.key, messageIds, { status: 'cancelled' });
}

/** The queue handle of session `key`. */
export function createSessionQueue(internals: RuntimeInternals, key: string): SessionQueue {
  return {
    list() {
      const live = internals.registry.live(key);
      if (live === undefined) return [];
      return live.actor.getSnapshot().context.queue.map((item) => ({
        messageId: item.messageId,
        text: item.text,
        mode: item.mode,
        enqueuedAt: item.enqueuedAt,
      }));
    },
    async cancel(messageId) {
      assertOpen(internals);
      if (typeof messageId !== 'string' || messageId.length === 0) {
        throw new RuntimeError('invalid_input', 'queue.cancel: messageId must be a non-empty string');
      }
      return internals.withSession(key, async (live) => {
        const queued = live.actor.getSnapshot().context.queue.some((item) => item.messageId === messageId);
        await remove(internals, live, queued ? [messageId] : [], 'cancelled');
        return queued;
      });
    },
    async clear() {
      assertOpen(internals);
      return internals.withSession(key, async (live) => {
        const messageIds = live.actor.getSnapshot().context.queue.map((item) => item.messageId);
        await remove(internals, live, messageIds, 'cleared');
        return messageIds.length;
      });
    },
  };
}
