import type { ConsumerPosition, ConsumerStore } from '../contract/consumer-store.js';
import type { Perform } from './perform.js';

/** The key a position is stored under: consumer and session (none: every session's events). */
export const consumerKey = (consumer: string, sessionKey: string | undefined): string =>
  JSON.stringify([consumer, sessionKey ?? null]);

/** Create the consumer-position methods of the memory ledger. */
export function createMemoryConsumers(perform: Perform): ConsumerStore {
  const positions = new Map<string, ConsumerPosition>();
  return {
    getConsumer: (consumer, sessionKey) =>
      perform(() => {
        const stored = positions.get(consumerKey(consumer, sessionKey));
        return stored && { ...stored };
      }),
    putConsumer: (position) =>
      perform(() => {
        positions.set(consumerKey(position.consumer, position.sessionKey), { ...position });
      }),
    forgetConsumers: (prefix, before) =>
      perform(() => {
        let forgotten = 0;
        for (const [key, position] of positions) {
          if (!position.consumer.startsWith(prefix) || position.updatedAt >= before) continue;
          positions.delete(key);
          forgotten += 1;
        }
        return forgotten;
      }),
  };
}
