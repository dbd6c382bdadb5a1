import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { InboxRecord, InboxStore } from '../../src/ledger/index.js';
import { type Current, errorOf, message } from './ledger-fixtures.contract.js';

/** The inbox: records keyed by (session, order), updated by id on the newest record. */
export function describeInboxContract(current: Current<InboxStore>): void {
  describe('inbox', () => {
    it('lists messages in order when they were appended out of order', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm3', 3));
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.appendMessage(message('s1', 'm2', 2));
      expect(await ledger.listMessages('s1')).toEqual([
        message('s1', 'm1', 1),
        message('s1', 'm2', 2),
        message('s1', 'm3', 3),
      ]);
      expect(await ledger.listMessages('nobody')).toEqual([]);
    });

    it('round-trips every optional field when a record carries them all', async () => {
      const record: InboxRecord = {
        ...message('s1', 'm1', 1),
        status: 'dropped',
        senderId: 'u1',
        channel: 'telegram',
        thread: 't1',
        runId: 'r1',
        summary: 'asked about refunds',
      };
      await current().appendMessage(record);
      expect(await current().listMessages('s1')).toEqual([record]);
    });

    it('round-trips the references of a message with content parts, in order', async () => {
      const record: InboxRecord = {
        ...message('s1', 'm1', 1),
        parts: [
          { type: 'text', text: 'see the photo' },
          {
            type: 'attachment',
            source: 'binary',
            mode: 'inline',
            name: 'photo.png',
            mediaType: 'image/png',
            size: 68,
            sha256: 'a'.repeat(64),
            path: '/workspace/s1/aaaaaaaaaaaaaaaa-photo.png',
          },
        ],
      };
      await current().appendMessage(record);
      await current().appendMessage(message('s1', 'm2', 2));
      expect(await current().listMessages('s1')).toEqual([record, message('s1', 'm2', 2)]);
    });

    it('updates status, runId and summary when updateMessages is called', async () => {
      const ledger = current();
      for (const order of [1, 2, 3]) await ledger.appendMessage(message('s1', `m${order}`, order));
      await ledger.updateMessages('s1', ['m1', 'm3', 'unknown'], { status: 'consumed', runId: 'r1' });
      await ledger.updateMessages('s1', ['m2'], { status: 'dropped', summary: 'asked about refunds' });
      const byId = new Map((await ledger.listMessages('s1')).map((record) => [record.messageId, record]));
      expect(byId.get('m1')).toEqual({ ...message('s1', 'm1', 1), status: 'consumed', runId: 'r1' });
      expect(byId.get('m2')).toEqual({
        ...message('s1', 'm2', 2),
        status: 'dropped',
        summary: 'asked about refunds',
      });
      expect(byId.get('m3')?.status).toBe('consumed');
    });

    it('ignores the update when the session has no inbox', async () => {
      await current().updateMessages('nobody', ['m1'], { status: 'consumed' });
      expect(await current().listMessages('nobody')).toEqual([]);
    });

    it('keeps the runId when a later update does not give one', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.updateMessages('s1', ['m1'], { status: 'steered', runId: 'r1' });
      await ledger.updateMessages('s1', ['m1'], { status: 'consumed' });
      expect((await ledger.listMessages('s1'))[0]).toMatchObject({ status: 'consumed', runId: 'r1' });
    });

    it('filters by status when statuses are given', async () => {
      const ledger = current();
      for (const order of [1, 2, 3, 4]) await ledger.appendMessage(message('s1', `m${order}`, order));
      await ledger.updateMessages('s1', ['m2'], { status: 'consumed' });
      await ledger.updateMessages('s1', ['m3'], { status: 'cancelled' });
      const ids = async (statuses: Parameters<InboxStore['listMessages']>[1]) =>
        (await ledger.listMessages('s1', statuses)).map((record) => record.messageId);
      expect(await ids(['pending'])).toEqual(['m1', 'm4']);
      expect(await ids(['pending', 'cancelled'])).toEqual(['m1', 'm3', 'm4']);
      expect(await ids([])).toEqual([]);
    });

    it('keeps sessions apart when they use the same message ids', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.appendMessage(message('s2', 'm1', 1));
      await ledger.updateMessages('s1', ['m1'], { status: 'consumed' });
      expect((await ledger.listMessages('s2'))[0]?.status).toBe('pending');
      expect(await ledger.listMessages('s1')).toHaveLength(1);
    });

    it('rejects with invalid_input when an order is appended twice to a session', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.appendMessage(message('s1', 'm3', 3));
      for (const duplicate of [message('s1', 'm2', 1), message('s1', 'm4', 3), message('s1', 'm1', 1)]) {
        expect(isRuntimeError(await errorOf(ledger.appendMessage(duplicate)), 'invalid_input')).toBe(true);
      }
      expect(await ledger.listMessages('s1')).toEqual([message('s1', 'm1', 1), message('s1', 'm3', 3)]);
    });

    it('keeps both records and updates only the newest when a message id is accepted again', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.appendMessage(message('s1', 'm2', 2));
      await ledger.appendMessage(message('s1', 'm1', 3));
      await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r2' });
      expect(await ledger.listMessages('s1')).toEqual([
        message('s1', 'm1', 1),
        message('s1', 'm2', 2),
        { ...message('s1', 'm1', 3), status: 'consumed', runId: 'r2' },
      ]);
    });

    it('leaves the older record as it was when the newest of a re-accepted id is updated', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' });
      await ledger.appendMessage(message('s1', 'm1', 2));
      await ledger.updateMessages('s1', ['m1'], { status: 'steered', runId: 'r2' });
      const records = (await ledger.listMessages('s1')).map((record) => [
        record.order,
        record.status,
        record.runId,
      ]);
      expect(records).toEqual([
        [1, 'consumed', 'r1'],
        [2, 'steered', 'r2'],
      ]);
    });

    it('keeps its own copy when the caller mutates the record after appending it', async () => {
      const record = { ...message('s1', 'm1', 1) };
      await current().appendMessage(record);
      (record as { text: string }).text = 'mutated';
      expect((await current().listMessages('s1'))[0]?.text).toBe('text m1');
    });
  });
}
