import { describe, expect, it } from 'vitest';
import type { ConsumerStore } from '../../src/ledger/index.js';
import type { Current } from './ledger-fixtures.contract.js';

/** Durable consumer positions: one per consumer name and session (none: every session). */
export function describeConsumersContract(current: Current<ConsumerStore>): void {
  describe('consumers', () => {
    it('answers undefined for a consumer that never stored a position', async () => {
      expect(await current().getConsumer('replies')).toBeUndefined();
      expect(await current().getConsumer('replies', 'telegram:1')).toBeUndefined();
    });

    it('keeps the last position stored for a consumer, replacing the one before', async () => {
      const ledger = current();
      await ledger.putConsumer({ consumer: 'replies', cursor: 7, updatedAt: 100 });
      await ledger.putConsumer({ consumer: 'replies', cursor: 12, updatedAt: 200 });
      expect(await ledger.getConsumer('replies')).toEqual({
        consumer: 'replies',
        cursor: 12,
        updatedAt: 200,
      });
    });

    it('keeps a session consumer apart from the every-session consumer of the same name', async () => {
      const ledger = current();
      await ledger.putConsumer({ consumer: 'replies', cursor: 3, updatedAt: 100 });
      await ledger.putConsumer({ consumer: 'replies', sessionKey: 'telegram:1', cursor: 9, updatedAt: 150 });
      await ledger.putConsumer({ consumer: 'replies', sessionKey: 'telegram:2', cursor: 5, updatedAt: 160 });
      expect(await ledger.getConsumer('replies')).toMatchObject({ cursor: 3 });
      expect(await ledger.getConsumer('replies', 'telegram:1')).toEqual({
        consumer: 'replies',
        sessionKey: 'telegram:1',
        cursor: 9,
        updatedAt: 150,
      });
      expect(await ledger.getConsumer('replies', 'telegram:2')).toMatchObject({ cursor: 5 });
      expect(await ledger.getConsumer('audit', 'telegram:1')).toBeUndefined();
    });

    it('hands out a copy: changing a returned position changes nothing stored', async () => {
      const ledger = current();
      await ledger.putConsumer({ consumer: 'replies', cursor: 4, updatedAt: 100 });
      const position = (await ledger.getConsumer('replies')) as { cursor: number };
      position.cursor = 99;
      expect(await ledger.getConsumer('replies')).toMatchObject({ cursor: 4 });
    });
  });
}
