import type { ConsumerStore } from '../contract/consumer-store.js';
import type {
  DeliveryIntent,
  DeliveryKey,
  DeliveryRecord,
  DeliveryStore,
} from '../contract/delivery-store.js';
import type { Perform } from './perform.js';

/** The key a delivery record is stored under. */
const deliveryKey = (key: DeliveryKey): string => JSON.stringify([key.consumer, key.runId, key.blockIndex]);

/** A record from an intent with a status (and the platform's message id once delivered). */
function recordOf(
  intent: DeliveryIntent,
  status: DeliveryRecord['status'],
  messageId?: string,
): DeliveryRecord {
  return {
    consumer: intent.consumer,
    runId: intent.runId,
    blockIndex: intent.blockIndex,
    sessionKey: intent.sessionKey,
    status,
    ...(messageId === undefined ? {} : { platformMessageId: messageId }),
    updatedAt: intent.at,
  };
}

/**
 * Create the delivery methods of the memory ledger. The consumer position goes through `consumers`; both writes of
 * `recordDelivery` run synchronously in the same call, so nothing can come between them.
 */
export function createMemoryDeliveries(perform: Perform, consumers: ConsumerStore): DeliveryStore {
  const records = new Map<string, DeliveryRecord>();
  return {
    getDelivery: (key) =>
      perform(() => {
        const stored = records.get(deliveryKey(key));
        return stored && { ...stored };
      }),
    listDeliveries: (consumer, runId) =>
      perform(() =>
        [...records.values()]
          .filter((record) => record.consumer === consumer && record.runId === runId)
          .sort((a, b) => a.blockIndex - b.blockIndex)
          .map((record) => ({ ...record })),
      ),
    markSending: (intent) =>
      perform(() => {
        const stored = records.get(deliveryKey(intent));
        if (stored !== undefined && stored.status !== 'sending') return false;
        records.set(deliveryKey(intent), recordOf(intent, 'sending'));
        return true;
      }),
    recordDelivery: async (delivered) => {
      const written = perform(() => {
        records.set(deliveryKey(delivered), recordOf(delivered, 'delivered', delivered.platformMessageId));
      });
      const moved = consumers.putConsumer({
        consumer: delivered.consumer,
        cursor: delivered.cursor,
        updatedAt: delivered.at,
      });
      await Promise.all([written, moved]);
    },
    markInDoubt: (intent) =>
      perform(() => {
        const stored = records.get(deliveryKey(intent));
        if (stored?.status === 'delivered') return;
        records.set(deliveryKey(intent), recordOf(intent, 'in_doubt'));
      }),
  };
}
