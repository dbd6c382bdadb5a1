import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../src/core/events.js';
import type { EventStore } from '../../src/ledger/index.js';
import { type Current, delta, event } from './ledger-fixtures.contract.js';

/** One event of most kinds, with nested, optional and absent fields (no deltas: they may be coalesced). */
function varied(): RuntimeEvent[] {
  const base = (cursor: number, seq: number) => ({ sessionKey: 's1', cursor, seq, at: 5000 + cursor });
  return [
    {
      ...base(1, 1),
      type: 'message.received',
      messageId: 'm1',
      text: 'hi',
      mode: 'collect',
      disposition: 'queued',
      senderId: 'u1',
      channel: 'telegram',
    },
    {
      ...base(2, 2),
      type: 'message.received',
      messageId: 'm2',
      text: '',
      mode: 'steer',
      disposition: 'steered',
    },
    { ...base(3, 3), type: 'message.admitted', messageIds: ['m1', 'm2'], runId: 'r1' },
    {
      ...base(4, 4),
      type: 'run.started',
      messageIds: ['m1'],
      provider: 'scripted',
      model: 'test-model',
      runId: 'r1',
    },
    {
      ...base(5, 5),
      type: 'tool.called',
      toolCallId: 'c1',
      tool: 'search',
      args: { q: 'x', nested: [1, { deep: true }], none: null },
      runId: 'r1',
    },
    {
      ...base(6, 6),
      type: 'tool.succeeded',
      toolCallId: 'c1',
      tool: 'search',
      output: ['a', { b: 2 }],
      durationMs: 12,
      runId: 'r1',
    },
    {
      ...base(7, 7),
      type: 'tool.failed',
      toolCallId: 'c2',
      tool: 'fetch',
      error: { code: 'provider_unavailable', message: 'down' },
      runId: 'r1',
    },
    { ...base(8, 8), type: 'assistant.block', index: 0, blockId: 'r1:0', text: 'Hello', runId: 'r1' },
    {
      ...base(9, 9),
      type: 'run.ended',
      status: 'failed',
      error: { code: 'provider_unavailable', message: 'overloaded' },
      text: 'Hello',
      usage: { inputTokens: 3, outputTokens: 1 },
      durationMs: 40,
      runId: 'r1',
    },
    {
      ...base(10, 10),
      type: 'message.dropped',
      messageId: 'm3',
      reason: 'cap_summarize',
      summary: 'asked twice',
    },
    { ...base(11, 11), type: 'lane.waited', lane: 'global', waitedMs: 0, position: 2 },
  ];
}

/** Events: the append-only log, its queries, cursors and pruning. */
export function describeEventsContract(current: Current<EventStore>): void {
  describe('events', () => {
    it('reports 0 as the last cursor when no event was appended', async () => {
      expect(await current().lastCursor()).toBe(0);
      expect(await current().readEvents({})).toEqual([]);
    });

    it('round-trips events deep-equal when they carry nested and optional fields', async () => {
      const all = varied();
      await current().appendEvents(all.slice(0, 4));
      await current().appendEvents(all.slice(4));
      expect(await current().readEvents({})).toEqual(varied());
    });

    it('reads events after a cursor, by session and up to a limit when queried', async () => {
      const ledger = current();
      const all = [event(2, 's1', 1), event(4, 's2', 1), event(6, 's1', 2)];
      await ledger.appendEvents(all.slice(0, 2));
      await ledger.appendEvents(all.slice(2));
      expect(await ledger.lastCursor()).toBe(6);
      expect(await ledger.readEvents({})).toEqual(all);
      expect(await ledger.readEvents({ after: 2 })).toEqual(all.slice(1));
      expect(await ledger.readEvents({ after: 3 })).toEqual(all.slice(1));
      expect(await ledger.readEvents({ after: 6 })).toEqual([]);
      expect(await ledger.readEvents({ sessionKey: 's1' })).toEqual([all[0], all[2]]);
      expect(await ledger.readEvents({ sessionKey: 's1', after: 2 })).toEqual([all[2]]);
      expect(await ledger.readEvents({ limit: 2 })).toEqual(all.slice(0, 2));
      expect(await ledger.readEvents({ limit: 0 })).toEqual([]);
      expect(await ledger.readEvents({ after: 2, limit: 1 })).toEqual([all[1]]);
      expect(await ledger.readEvents({ sessionKey: 's1', after: 0, limit: 1 })).toEqual([all[0]]);
      expect(await ledger.readEvents({ sessionKey: 'nobody' })).toEqual([]);
    });

    it('answers every query like a filter over the log when events span sessions', async () => {
      const sessions = ['a', 'b', 'c'];
      const log: RuntimeEvent[] = [];
      const seqs = new Map<string, number>();
      for (let cursor = 1; cursor <= 60; cursor++) {
        const sessionKey = sessions[(cursor * 7) % 3] as string;
        seqs.set(sessionKey, (seqs.get(sessionKey) ?? 0) + 1);
        log.push(event(cursor * 3, sessionKey, seqs.get(sessionKey) ?? 0));
      }
      await current().appendEvents(log);
      const query = fc.record(
        {
          after: fc.integer({ min: -1, max: 200 }),
          sessionKey: fc.constantFrom(...sessions),
          limit: fc.nat(70),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const expected = log
            .filter(
              (e) =>
                e.cursor > (q.after ?? -Infinity) &&
                (q.sessionKey === undefined || e.sessionKey === q.sessionKey),
            )
            .slice(0, q.limit ?? Infinity);
          expect(await current().readEvents(q)).toEqual(expected);
        }),
        { numRuns: 200 },
      );
    });

    it('reports the cursor of the last delta as the last cursor when deltas end the log', async () => {
      await current().appendEvents([
        event(1, 's1', 1),
        delta(2, 's1', 2, 'r1', 'He'),
        delta(3, 's1', 3, 'r1', 'y'),
      ]);
      await current().appendEvents([delta(5, 's1', 4, 'r1', '!')]);
      expect(await current().lastCursor()).toBe(5);
    });
  });

  describe('pruneEvents', () => {
    it('deletes the events recorded before the time and resolves how many when some are older', async () => {
      const ledger = current();
      // `at` need not follow the cursor: pruning goes by `at`, and an event at exactly `before` stays.
      const all = [
        event(1, 's1', 1, 50),
        event(2, 's2', 1, 10),
        event(3, 's1', 2, 60),
        event(4, 's1', 3, 40),
      ];
      await ledger.appendEvents(all);
      expect(await ledger.pruneEvents(40)).toBe(1);
      expect(await ledger.readEvents({})).toEqual([all[0], all[2], all[3]]);
      expect(await ledger.pruneEvents(55)).toBe(2);
      expect(await ledger.readEvents({})).toEqual([all[2]]);
      expect(await ledger.readEvents({ sessionKey: 's1' })).toEqual([all[2]]);
      expect(await ledger.readEvents({ sessionKey: 's2' })).toEqual([]);
      expect(await ledger.readEvents({ after: 1 })).toEqual([all[2]]);
      expect(await ledger.pruneEvents(55)).toBe(0);
      expect(await ledger.lastCursor()).toBe(4);
    });

    it('resolves 0 when the log is empty', async () => {
      expect(await current().pruneEvents(Number.MAX_SAFE_INTEGER)).toBe(0);
    });

    it('keeps the highest cursor and takes later ones when every event was pruned', async () => {
      const ledger = current();
      await ledger.appendEvents([event(1, 's1', 1), event(2, 's1', 2), event(3, 's2', 1)]);
      expect(await ledger.pruneEvents(Number.MAX_SAFE_INTEGER)).toBe(3);
      expect(await ledger.readEvents({})).toEqual([]);
      expect(await ledger.lastCursor()).toBe(3);
      const later = event(4, 's1', 3);
      await ledger.appendEvents([later]);
      expect(await ledger.readEvents({})).toEqual([later]);
      expect(await ledger.readEvents({ after: 3, sessionKey: 's1' })).toEqual([later]);
      expect(await ledger.lastCursor()).toBe(4);
    });
  });
}
