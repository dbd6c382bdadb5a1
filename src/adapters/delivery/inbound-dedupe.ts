import type { Clock } from '../../core/index.js';
import type { ConsumerStore } from '../../ledger/index.js';

/**
 * How long an adapter remembers a platform message it handled: 48 hours. Telegram retries an unacknowledged
 * webhook update for hours (and a long-polling bot that crashed gets its unconfirmed updates again), far past the
 * runtime's 5-minute dedupe window.
 */
export const redeliveryWindowMs = 48 * 60 * 60_000;

/** How often records older than the window are deleted (at the first message handled, then at most this often). */
const pruneEveryMs = 60 * 60_000;

/** A durable record of the platform messages an adapter handled, so a late redelivery is not answered twice. */
export interface InboundDedupe {
  /** True when the message was handled less than the window ago (a redelivery: to be ignored). */
  readonly seen: (sessionKey: string, messageId: string) => Promise<boolean>;
  /** Record the message as handled (after the runtime took it). */
  readonly remember: (sessionKey: string, messageId: string) => Promise<void>;
}

/** Options of `createInboundDedupe`. */
export interface InboundDedupeOptions {
  /** The ledger the runtime was created with: the records are kept with the durable consumers' positions. */
  readonly store: ConsumerStore;
  /** The adapter's consumer name (records are kept under `<consumer>:inbound:<message id>`). */
  readonly consumer: string;
  readonly clock: Clock;
  /** @default redeliveryWindowMs (48 h) */
  readonly windowMs?: number;
  /** Told when deleting the records past the window failed (they are deleted at a later try). @default ignored */
  readonly onError?: (error: unknown) => void;
}

/**
 * A dedupe of handled platform messages that survives a restart: one small row per message in the ledger's
 * consumer positions (keyed by the adapter's consumer, the message id and the session), each a point lookup.
 * A message seen again after the window is taken as new, like the runtime's own dedupe. Records past the window
 * are deleted at most once an hour, so a bot that runs for months keeps about two days of them.
 */
export function createInboundDedupe(options: InboundDedupeOptions): InboundDedupe {
  const windowMs = options.windowMs ?? redeliveryWindowMs;
  const prefix = `${options.consumer}:inbound:`;
  const recordName = (messageId: string): string => `${prefix}${messageId}`;
  let prunedAt: number | undefined;
  const prune = async (now: number): Promise<void> => {
    if (prunedAt !== undefined && now - prunedAt < pruneEveryMs) return;
    prunedAt = now;
    try {
      await options.store.forgetConsumers(prefix, now - windowMs);
    } catch (error) {
      prunedAt = undefined;
      options.onError?.(error);
    }
  };
  return {
    async seen(sessionKey, messageId) {
      const record = await options.store.getConsumer(recordName(messageId), sessionKey);
      return record !== undefined && options.clock.now() - record.updatedAt < windowMs;
    },
    async remember(sessionKey, messageId) {
      const now = options.clock.now();
      await options.store.putConsumer({
        consumer: recordName(messageId),
        sessionKey,
        cursor: 0,
        updatedAt: now,
      });
      await prune(now);
    },
  };
}
