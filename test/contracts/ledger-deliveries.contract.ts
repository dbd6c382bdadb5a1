import { describe, expect, it } from 'vitest';
import type { ConsumerStore, DeliveryStore } from '../../src/ledger/index.js';
import type { Current } from './ledger-fixtures.contract.js';

const key = { consumer: 'telegram', runId: 'run-1', blockIndex: 0 } as const;
const intent = { ...key, sessionKey: 'telegram:1', at: 100 } as const;

/** Chat adapters' deliveries: a block's intent, its delivery with the consumer's cursor, and doubt. */
export function describeDeliveriesContract(current: Current<DeliveryStore & ConsumerStore>): void {
  describe('deliveries', () => {
    it('answers undefined for a block never attempted and an empty list for a run', async () => {
      expect(await current().getDelivery(key)).toBeUndefined();
      expect(await current().listDeliveries('telegram', 'run-1')).toEqual([]);
    });

    it('records the intent to send, then the delivery with the consumer cursor', async () => {
      const ledger = current();
      expect(await ledger.markSending(intent)).toBe(true);
      expect(await ledger.getDelivery(key)).toEqual({
        ...key,
        sessionKey: 'telegram:1',
        status: 'sending',
        updatedAt: 100,
      });
      await ledger.recordDelivery({ ...intent, at: 150, platformMessageId: '77', cursor: 42 });
      expect(await ledger.getDelivery(key)).toEqual({
        ...key,
        sessionKey: 'telegram:1',
        status: 'delivered',
        platformMessageId: '77',
        updatedAt: 150,
      });
      expect(await ledger.getConsumer('telegram')).toEqual({
        consumer: 'telegram',
        cursor: 42,
        updatedAt: 150,
      });
    });

    it('refuses a new intent for a block already delivered or in doubt, keeping its record', async () => {
      const ledger = current();
      await ledger.recordDelivery({ ...intent, platformMessageId: '5', cursor: 3 });
      expect(await ledger.markSending({ ...intent, at: 200 })).toBe(false);
      expect(await ledger.getDelivery(key)).toMatchObject({ status: 'delivered', platformMessageId: '5' });
      const other = { ...intent, blockIndex: 1 };
      await ledger.markSending(other);
      await ledger.markInDoubt({ ...other, at: 300 });
      expect(await ledger.markSending({ ...other, at: 400 })).toBe(false);
      expect(await ledger.getDelivery(other)).toMatchObject({ status: 'in_doubt', updatedAt: 300 });
    });

    it('accepts a repeated intent while the block is still being sent', async () => {
      const ledger = current();
      expect(await ledger.markSending(intent)).toBe(true);
      expect(await ledger.markSending({ ...intent, at: 180 })).toBe(true);
      expect(await ledger.getDelivery(key)).toMatchObject({ status: 'sending', updatedAt: 180 });
    });

    it('never turns a delivered block into one in doubt', async () => {
      const ledger = current();
      await ledger.recordDelivery({ ...intent, platformMessageId: '9', cursor: 1 });
      await ledger.markInDoubt({ ...intent, at: 500 });
      expect(await ledger.getDelivery(key)).toMatchObject({ status: 'delivered', platformMessageId: '9' });
    });

    it('lists a run by block index, apart from other consumers and runs', async () => {
      const ledger = current();
      await ledger.recordDelivery({ ...intent, blockIndex: 2, platformMessageId: 'c', cursor: 9 });
      await ledger.recordDelivery({ ...intent, blockIndex: -1, platformMessageId: 'n', cursor: 10 });
      await ledger.markSending({ ...intent, blockIndex: 1 });
      await ledger.markSending({ ...intent, consumer: 'slack' });
      await ledger.markSending({ ...intent, runId: 'run-2' });
      const listed = await ledger.listDeliveries('telegram', 'run-1');
      expect(listed.map((record) => [record.blockIndex, record.status])).toEqual([
        [-1, 'delivered'],
        [1, 'sending'],
        [2, 'delivered'],
      ]);
    });

    it('hands out copies: changing a returned record changes nothing stored', async () => {
      const ledger = current();
      await ledger.recordDelivery({ ...intent, platformMessageId: '1', cursor: 1 });
      const record = (await ledger.getDelivery(key)) as { platformMessageId: string };
      record.platformMessageId = 'changed';
      expect(await ledger.getDelivery(key)).toMatchObject({ platformMessageId: '1' });
    });
  });
}
