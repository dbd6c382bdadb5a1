import { describe, expect, it } from 'vitest';
import type { TranscriptStore, TurnRecord } from '../../src/ledger/index.js';
import { type Current, turn } from './ledger-fixtures.contract.js';

/** The transcript: turns appended in order, read per session (all or the latest) and per run. */
export function describeTranscriptContract(current: Current<TranscriptStore>): void {
  describe('turns', () => {
    it('lists turns in recorded order for the session only when appended in batches', async () => {
      const ledger = current();
      const toolCalls = [{ id: 'c1', name: 'search', args: { q: 'x', nested: [1, 2] } }];
      const first = [
        turn('s1', 'r1', 0, { role: 'user', messageIds: ['m1'] }),
        turn('s1', 'r1', 1, { toolCalls }),
      ];
      const second = [
        turn('s1', 'r1', 2, { role: 'tool', toolCallId: 'c1', tool: 'search', isError: false }),
      ];
      await ledger.appendTurns(first);
      await ledger.appendTurns([turn('s2', 'r2', 0)]);
      await ledger.appendTurns(second);
      expect(await ledger.listTurns('s1')).toEqual([...first, ...second]);
      expect(await ledger.listTurns('s2')).toHaveLength(1);
      expect(await ledger.listTurns('nobody')).toEqual([]);
    });

    it('lists only the latest turns, in order, when last is given', async () => {
      const ledger = current();
      const all = [0, 1, 2, 3].map((index) => turn('s1', index < 2 ? 'r1' : 'r2', index));
      await ledger.appendTurns(all.slice(0, 3));
      await ledger.appendTurns([turn('s2', 'r9', 0), turn('s2', 'r9', 1)]);
      await ledger.appendTurns(all.slice(3));
      expect(await ledger.listTurns('s1', { last: 2 })).toEqual(all.slice(2));
      expect(await ledger.listTurns('s1', { last: 1 })).toEqual(all.slice(3));
      expect(await ledger.listTurns('s1', { last: 4 })).toEqual(all);
      expect(await ledger.listTurns('s1', { last: 10 })).toEqual(all);
      expect(await ledger.listTurns('s1', {})).toEqual(all);
      expect(await ledger.listTurns('s1', { last: 0 })).toEqual([]);
      expect(await ledger.listTurns('nobody', { last: 3 })).toEqual([]);
    });

    it('keeps its own copy when the caller mutates a turn after appending it', async () => {
      const args = { q: 'x' };
      const record = turn('s1', 'r1', 0, { toolCalls: [{ id: 'c1', name: 'search', args }] });
      await current().appendTurns([record]);
      args.q = 'mutated';
      const stored = (await current().listTurns('s1'))[0];
      expect(stored?.toolCalls?.[0]?.args).toEqual({ q: 'x' });
    });

    it("lists one run's turns in recorded order when runs and sessions interleave", async () => {
      const ledger = current();
      const r1 = [
        turn('s1', 'r1', 0, { role: 'user', messageIds: ['m1'] }),
        turn('s1', 'r1', 1, { toolCalls: [{ id: 'c1', name: 'search', args: { q: 'x' } }] }),
        turn('s1', 'r1', 2, { role: 'tool', toolCallId: 'c1', tool: 'search', isError: false }),
      ];
      await ledger.appendTurns([r1[0] as TurnRecord, turn('s1', 'r2', 0)]);
      await ledger.appendTurns([turn('s2', 'r9', 0), r1[1] as TurnRecord]);
      await ledger.appendTurns([r1[2] as TurnRecord]);
      expect(await ledger.listRunTurns('r1')).toEqual(r1);
      expect(await ledger.listRunTurns('r2')).toEqual([turn('s1', 'r2', 0)]);
      expect(await ledger.listRunTurns('ghost')).toEqual([]);
    });
  });
}
