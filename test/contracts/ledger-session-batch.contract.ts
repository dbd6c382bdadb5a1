import { describe, expect, it } from 'vitest';
import type { Ledger, SessionLoad } from '../../src/ledger/index.js';
import {
  type CurrentLedger,
  delta,
  event,
  message,
  run,
  session,
  toolCall,
  turn,
} from './ledger-fixtures.contract.js';

/** The ledger's batch read (every ledger of the project has one). */
function batchOf(ledger: Ledger): (keys: readonly string[]) => Promise<SessionLoad[]> {
  return (keys) => {
    if (ledger.loadSessions === undefined) throw new Error('this ledger has no loadSessions');
    return ledger.loadSessions(keys);
  };
}

/**
 * Five sessions of every kind hydration meets: a record with events and a mixed inbox (a steered message a turn
 * admitted, one it did not), a paused run with its calls, more than one paused run, an inbox alone, and nothing.
 */
async function fiveSessions(ledger: Ledger): Promise<void> {
  await ledger.putSession(session('a', { lastSeq: 2 }));
  await ledger.appendEvents([event(1, 'a', 1), event(2, 'b', 5), delta(3, 'a', 9, 'r0', 'x')]);
  for (const order of [1, 2, 3, 4]) await ledger.appendMessage(message('a', `m${order}`, order));
  await ledger.updateMessages('a', ['m1'], { status: 'consumed', runId: 'r0' });
  await ledger.updateMessages('a', ['m2', 'm3'], { status: 'steered', runId: 'r0' });
  await ledger.appendTurns([turn('a', 'r0', 0, { role: 'user', messageIds: ['m2'] })]);
  await ledger.openRun(run('b', 'r1', 100));
  await ledger.openRun(run('b', 'r2', 200));
  await ledger.setRunStatus('r1', 'awaiting_approval');
  await ledger.setRunStatus('r2', 'awaiting_tool_results');
  await ledger.putToolCalls([
    toolCall('b', 'r2', 1, 0),
    toolCall('b', 'r2', 2, 1),
    toolCall('b', 'r2', 2, 0),
  ]);
  await ledger.openRun({ ...run('c', 'r3'), status: 'awaiting_approval' });
  await ledger.appendMessage(message('d', 'd1', 5));
  await ledger.appendMessage(message('d', 'd2', 2));
}

/** `loadSessions`: hydrating many sessions with one read per table. */
export function describeSessionBatchContract(current: CurrentLedger): void {
  describe('loadSessions', () => {
    it('returns for each key what loadSession returns, in the order given, when sessions of every kind are asked', async () => {
      const ledger = current();
      await fiveSessions(ledger);
      const keys = ['e', 'd', 'c', 'b', 'a'];
      const expected: SessionLoad[] = [];
      for (const sessionKey of keys)
        expected.push({ sessionKey, state: await ledger.loadSession(sessionKey) });
      expect(await batchOf(ledger)(keys)).toEqual(expected);
      const a = expected[4];
      expect(
        a !== undefined && 'state' in a ? a.state.pending.map((record) => record.messageId) : [],
      ).toEqual(['m3', 'm4']);
      expect(a !== undefined && 'state' in a ? [a.state.lastSeq, a.state.lastOrder] : []).toEqual([9, 4]);
      const b = expected[3];
      expect(
        b !== undefined && 'state' in b ? b.state.paused?.calls.map((call) => call.toolCallId) : [],
      ).toEqual(['call-2-0', 'call-2-1']);
    });

    it('returns an entry per key, the same state twice, when a key is asked twice', async () => {
      const ledger = current();
      await ledger.appendMessage(message('s1', 'm1', 1));
      const loads = await batchOf(ledger)(['s1', 's1']);
      expect(loads).toHaveLength(2);
      expect(loads[0]).toEqual(loads[1]);
      expect(loads[0]).toEqual({ sessionKey: 's1', state: await ledger.loadSession('s1') });
    });

    it('returns nothing when no key is asked', async () => {
      expect(await batchOf(current())([])).toEqual([]);
    });

    it('sees a write called before it when the write is not awaited first', async () => {
      const ledger = current();
      const write = ledger.appendMessage(message('s1', 'm1', 1));
      const read = batchOf(ledger)(['s1']);
      await write;
      const [load] = await read;
      expect(load !== undefined && 'state' in load ? load.state.pending : []).toEqual([
        message('s1', 'm1', 1),
      ]);
    });

    it('returns the latest accepted ids of each session up to recentLimit, oldest first', async () => {
      const ledger = current();
      for (const order of [1, 2, 3]) await ledger.appendMessage(message('s1', `m${order}`, order));
      await ledger.appendMessage(message('s2', 'x', 7));
      const loads = await batchOf(ledger)(['s1', 's2']);
      expect(loads.map((load) => ('state' in load ? load.state.recent : []))).toEqual([
        [
          ['m1', 101],
          ['m2', 102],
          ['m3', 103],
        ],
        [['x', 107]],
      ]);
    });
  });
}
