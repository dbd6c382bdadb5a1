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

    it('forgets the positions of consumers named with a prefix stored before a time, of every session', async () => {
      const ledger = current();
      await ledger.putConsumer({
        consumer: 'tg:inbound:1',
        sessionKey: 'telegram:1',
        cursor: 0,
        updatedAt: 100,
      });
      await ledger.putConsumer({
        consumer: 'tg:inbound:2',
        sessionKey: 'telegram:2',
        cursor: 0,
        updatedAt: 199,
      });
      await ledger.putConsumer({
        consumer: 'tg:inbound:3',
        sessionKey: 'telegram:1',
        cursor: 0,
        updatedAt: 200,
      });
      await ledger.putConsumer({ consumer: 'tg:replies', cursor: 9, updatedAt: 50 });
      await ledger.putConsumer({ consumer: 'xtg:inbound:4', cursor: 0, updatedAt: 50 });
      expect(await ledger.forgetConsumers('tg:inbound:', 200)).toBe(2);
      expect(await ledger.getConsumer('tg:inbound:1', 'telegram:1')).toBeUndefined();
      expect(await ledger.getConsumer('tg:inbound:2', 'telegram:2')).toBeUndefined();
      expect(await ledger.getConsumer('tg:inbound:3', 'telegram:1')).toMatchObject({ updatedAt: 200 });
      expect(await ledger.getConsumer('tg:replies')).toMatchObject({ cursor: 9 });
      expect(await ledger.getConsumer('xtg:inbound:4')).toMatchObject({ cursor: 0 });
      expect(await ledger.forgetConsumers('tg:inbound:', 200)).toBe(0);
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
