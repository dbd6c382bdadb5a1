import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../src/core/events.js';
import type { InboxStatus } from '../../src/ledger/index.js';
import {
  type CurrentLedger,
  delta,
  deltaText,
  event,
  message,
  run,
  session,
  toolCall,
  turn,
  withoutDeltas,
} from './ledger-fixtures.contract.js';

/** Append `statuses.length` messages to a session (orders 1..n, ids m1..mn) and give each its status. */
async function inbox(current: CurrentLedger, sessionKey: string, statuses: readonly InboxStatus[]) {
  for (const [index, status] of statuses.entries()) {
    const messageId = `m${index + 1}`;
    await current().appendMessage(message(sessionKey, messageId, index + 1));
    if (status !== 'pending')
      await current().updateMessages(sessionKey, [messageId], { status, runId: 'r1' });
  }
}

/** What a restart reads across the stores: loadSession, listSessionsWithPending and runText (typed as the whole ledger). */
export function describeRecoveryContract(current: CurrentLedger): void {
  describe('loadSession', () => {
    it('returns an empty state when the session is unknown', async () => {
      expect(await current().loadSession('nobody')).toEqual({
        record: undefined,
        lastSeq: 0,
        lastOrder: 0,
        pending: [],
        recent: [],
      });
    });

    it('returns the latest accepted ids with their times, oldest first, whatever their status', async () => {
      const ledger = current();
      for (const order of [1, 2, 3]) await ledger.appendMessage(message('s1', `m${order}`, order));
      await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' });
      await ledger.appendMessage(message('s1', 'm1', 4));
      await ledger.appendMessage(message('s2', 'other', 1));
      expect((await ledger.loadSession('s1')).recent).toEqual([
        ['m1', 101],
        ['m2', 102],
        ['m3', 103],
        ['m1', 104],
      ]);
    });

    it("returns getSession's record and the highest event seq, not the record's lastSeq", async () => {
      const ledger = current();
      await ledger.putSession(session('s1', { lastSeq: 7 }));
      await ledger.appendEvents([
        event(1, 's1', 1),
        event(2, 's2', 40),
        event(3, 's1', 2),
        event(4, 's1', 3),
      ]);
      const state = await ledger.loadSession('s1');
      expect(state.record).toEqual(await ledger.getSession('s1'));
      expect(state.record).toEqual(session('s1', { lastSeq: 7 }));
      expect(state.lastSeq).toBe(3);
      await ledger.appendEvents([event(5, 's1', 12)]);
      expect((await ledger.loadSession('s1')).lastSeq).toBe(12);
      expect((await ledger.loadSession('s2')).lastSeq).toBe(40);
    });

    it('counts the seq of the last delta when deltas end the session', async () => {
      const ledger = current();
      await ledger.appendEvents([
        event(1, 's1', 1),
        delta(2, 's1', 2, 'r1', 'a'),
        delta(3, 's1', 3, 'r1', 'b'),
      ]);
      await ledger.appendEvents([delta(4, 's1', 4, 'r1', 'c'), delta(5, 's2', 1, 'r2', 'x')]);
      expect((await ledger.loadSession('s1')).lastSeq).toBe(4);
    });

    it('returns the highest inbox order whatever its status when messages arrived out of order', async () => {
      const ledger = current();
      for (const order of [3, 1, 7, 5]) await ledger.appendMessage(message('s1', `m${order}`, order));
      await ledger.appendMessage(message('s2', 'm9', 9));
      await ledger.updateMessages('s1', ['m7'], { status: 'consumed', runId: 'r1' });
      const state = await ledger.loadSession('s1');
      expect(state.record).toBeUndefined();
      expect(state.lastOrder).toBe(7);
      expect(state.lastSeq).toBe(0);
    });

    it('returns pending messages and steered ones no turn admitted, in order, when statuses are mixed', async () => {
      const ledger = current();
      const statuses = [
        'pending',
        'consumed',
        'steered',
        'steered',
        'collected',
        'dropped',
        'cancelled',
        'pending',
      ];
      await inbox(current, 's1', statuses as InboxStatus[]);
      // m3 reached the model in a turn of s1; m4 only in a turn of another session.
      await ledger.appendTurns([turn('s1', 'r1', 0, { role: 'user', messageIds: ['m2', 'm3'] })]);
      await ledger.appendTurns([turn('s2', 'r2', 0, { role: 'user', messageIds: ['m4'] })]);
      const byId = new Map((await ledger.listMessages('s1')).map((record) => [record.messageId, record]));
      const { pending } = await ledger.loadSession('s1');
      expect(pending).toEqual([byId.get('m1'), byId.get('m4'), byId.get('m8')]);
      expect(pending[1]).toMatchObject({ status: 'steered', runId: 'r1', order: 4 });
    });

    it('drops a steered message from pending when a turn admitting it is recorded', async () => {
      const ledger = current();
      await inbox(current, 's1', ['steered', 'steered']);
      expect((await ledger.loadSession('s1')).pending.map((record) => record.messageId)).toEqual([
        'm1',
        'm2',
      ]);
      await ledger.appendTurns([
        turn('s1', 'r1', 0),
        turn('s1', 'r1', 1, { role: 'user', messageIds: ['m2'] }),
      ]);
      expect((await ledger.loadSession('s1')).pending.map((record) => record.messageId)).toEqual(['m1']);
    });
  });

  describe('loadSession (paused)', () => {
    it('returns no paused run when the session has none paused', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1'));
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0)]);
      expect(await ledger.loadSession('s1')).not.toHaveProperty('paused');
      expect(await ledger.loadSession('nobody')).not.toHaveProperty('paused');
    });

    it('returns the latest started paused run with the calls of its latest turn by position', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1', 100));
      await ledger.openRun(run('s1', 'r2', 200));
      await ledger.openRun(run('s2', 'r9', 250));
      await ledger.openRun(run('s1', 'r3', 300));
      await ledger.setRunStatus('r2', 'awaiting_approval');
      await ledger.setRunStatus('r1', 'awaiting_tool_results');
      await ledger.setRunStatus('r9', 'awaiting_approval');
      await ledger.putToolCalls([toolCall('s1', 'r2', 1, 0, { kind: 'ran', status: 'settled' })]);
      await ledger.putToolCalls([toolCall('s1', 'r2', 2, 2), toolCall('s1', 'r2', 2, 0, { kind: 'ran' })]);
      await ledger.putToolCalls([toolCall('s1', 'r2', 2, 1, { kind: 'deferred' })]);
      await ledger.putToolCalls([toolCall('s1', 'r1', 3, 0), toolCall('s2', 'r9', 4, 0)]);
      expect((await ledger.loadSession('s1')).paused).toEqual({
        run: { ...run('s1', 'r2', 200), status: 'awaiting_approval' },
        calls: [
          toolCall('s1', 'r2', 2, 0, { kind: 'ran' }),
          toolCall('s1', 'r2', 2, 1, { kind: 'deferred' }),
          toolCall('s1', 'r2', 2, 2),
        ],
      });
      await ledger.setRunStatus('r2', 'running');
      expect((await ledger.loadSession('s1')).paused).toEqual({
        run: { ...run('s1', 'r1', 100), status: 'awaiting_tool_results' },
        calls: [toolCall('s1', 'r1', 3, 0)],
      });
    });

    it('returns the paused run with no calls when none were recorded for it', async () => {
      const ledger = current();
      await ledger.openRun({ ...run('s1', 'r1'), status: 'awaiting_approval' });
      expect((await ledger.loadSession('s1')).paused).toEqual({
        run: { ...run('s1', 'r1'), status: 'awaiting_approval' },
        calls: [],
      });
    });
  });

  describe('listSessionsWithPending', () => {
    it('returns no key when nothing was recorded', async () => {
      expect(await current().listSessionsWithPending()).toEqual([]);
    });

    it('returns the sessions loadSession would give pending messages when inboxes are mixed', async () => {
      const ledger = current();
      await inbox(current, 'a', ['consumed', 'pending']);
      await inbox(current, 'b', ['consumed', 'dropped', 'cancelled', 'collected']);
      await inbox(current, 'c', ['consumed', 'steered']);
      await inbox(current, 'd', ['steered']);
      await ledger.appendTurns([turn('d', 'r1', 0, { role: 'user', messageIds: ['m1'] })]);
      await inbox(current, 'e', ['pending']);
      await ledger.updateMessages('e', ['m1'], { status: 'cancelled' });
      await ledger.putSession(session('f'));
      expect((await ledger.listSessionsWithPending()).sort()).toEqual(['a', 'c']);
    });
  });

  describe('pruneEvents (what a restart reads)', () => {
    it('keeps sessions, inbox, runs and turns when every event is pruned', async () => {
      const ledger = current();
      await ledger.putSession(session('s1'));
      await ledger.appendMessage(message('s1', 'm1', 1));
      await ledger.openRun(run('s1', 'r1'));
      await ledger.appendTurns([turn('s1', 'r1', 0)]);
      await ledger.appendEvents([event(1, 's1', 1), event(2, 's1', 2)]);
      expect(await ledger.pruneEvents(Number.MAX_SAFE_INTEGER)).toBe(2);
      expect(await ledger.getSession('s1')).toEqual(session('s1'));
      expect(await ledger.listMessages('s1')).toEqual([message('s1', 'm1', 1)]);
      expect(await ledger.getRun('r1')).toEqual(run('s1', 'r1'));
      expect(await ledger.listOpenRuns()).toEqual([run('s1', 'r1')]);
      expect(await ledger.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);
      expect((await ledger.loadSession('s1')).pending).toEqual([message('s1', 'm1', 1)]);
    });
  });

  describe('runText', () => {
    it('returns an empty text when the run is unknown or streamed no delta', async () => {
      await current().appendEvents([{ ...event(1, 's1', 1), runId: 'r1' }]);
      expect(await current().runText('r1')).toBe('');
      expect(await current().runText('ghost')).toBe('');
    });

    it("concatenates the run's deltas in cursor order when runs interleave across batches", async () => {
      const ledger = current();
      const first: RuntimeEvent[] = [
        { ...event(1, 's1', 1), runId: 'r1' },
        delta(2, 's1', 2, 'r1', 'Hel'),
        delta(3, 's2', 1, 'r2', 'Bon'),
        delta(4, 's1', 3, 'r1', 'lo'),
        {
          type: 'assistant.reasoning',
          sessionKey: 's1',
          seq: 4,
          cursor: 5,
          at: 1005,
          runId: 'r1',
          delta: '?',
        },
        {
          type: 'tool.called',
          sessionKey: 's1',
          seq: 5,
          cursor: 6,
          at: 1006,
          runId: 'r1',
          toolCallId: 'c1',
          tool: 't',
          args: {},
        },
      ];
      const second = [
        delta(7, 's1', 6, 'r1', ', '),
        delta(8, 's2', 2, 'r2', 'jour'),
        delta(9, 's1', 7, 'r1', 'world'),
      ];
      await ledger.appendEvents(first);
      await ledger.appendEvents(second);
      expect(await ledger.runText('r1')).toBe('Hello, world');
      expect(await ledger.runText('r2')).toBe('Bonjour');
      // However deltas are stored, reading them back keeps each run's text and every other event exact.
      const read = await ledger.readEvents({});
      expect(deltaText(read, 'r1')).toBe('Hello, world');
      expect(deltaText(read, 'r2')).toBe('Bonjour');
      expect(withoutDeltas(read)).toEqual(withoutDeltas([...first, ...second]));
    });
  });
}
