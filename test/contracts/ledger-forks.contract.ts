import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { RunStore, TranscriptStore } from '../../src/ledger/index.js';
import { type Current, run, turn } from './ledger-fixtures.contract.js';

/** Forked transcripts: stored by reference, read as the parent's first turns then the fork's own. */
export function describeForksContract(current: Current<TranscriptStore & RunStore>): void {
  describe('forks', () => {
    const parentTurns = [0, 1, 2, 3].map((index) => turn('p', index < 2 ? 'r1' : 'r2', index));

    it("reads a fork as the parent's first turns then its own, and leaves the parent as it was", async () => {
      const ledger = current();
      await ledger.appendTurns(parentTurns.slice(0, 3));
      await ledger.forkTranscript({ sessionKey: 'c', parentKey: 'p', turns: 2, upToRunId: 'r1', at: 5 });
      await ledger.appendTurns([parentTurns[3]!, turn('c', 'rc', 0)]);
      expect(await ledger.listTurns('c')).toEqual([...parentTurns.slice(0, 2), turn('c', 'rc', 0)]);
      expect(await ledger.listTurns('p')).toEqual(parentTurns);
      expect(await ledger.listTurns('c', { last: 2 })).toEqual([parentTurns[1], turn('c', 'rc', 0)]);
      expect(await ledger.listTurns('c', { last: 0 })).toEqual([]);
      expect(await ledger.listRunTurns('rc')).toEqual([turn('c', 'rc', 0)]);
      expect(await ledger.getFork('c')).toEqual({
        sessionKey: 'c',
        parentKey: 'p',
        turns: 2,
        upToRunId: 'r1',
        at: 5,
      });
      expect(await ledger.getFork('p')).toBeUndefined();
    });

    it('resolves a fork of a fork through both parents, each cut where it was taken', async () => {
      const ledger = current();
      await ledger.appendTurns(parentTurns);
      await ledger.forkTranscript({ sessionKey: 'c', parentKey: 'p', turns: 3, at: 5 });
      await ledger.appendTurns([turn('c', 'rc', 0), turn('c', 'rc', 1)]);
      await ledger.forkTranscript({ sessionKey: 'g', parentKey: 'c', turns: 4, at: 6 });
      await ledger.forkTranscript({ sessionKey: 'h', parentKey: 'c', turns: 1, at: 7 });
      await ledger.appendTurns([turn('c', 'rc', 2), turn('g', 'rg', 0)]);
      const inherited = [...parentTurns.slice(0, 3), turn('c', 'rc', 0)];
      expect(await ledger.listTurns('g')).toEqual([...inherited, turn('g', 'rg', 0)]);
      expect(await ledger.listTurns('g', { last: 3 })).toEqual([
        parentTurns[2],
        turn('c', 'rc', 0),
        turn('g', 'rg', 0),
      ]);
      expect(await ledger.listTurns('h')).toEqual([parentTurns[0]]);
      expect(await ledger.listTurns('c')).toHaveLength(6);
    });

    it('refuses a second fork of a session, or a fork of one with turns, with invalid_input and writes nothing', async () => {
      const ledger = current();
      await ledger.appendTurns([turn('own', 'r9', 0)]);
      await ledger.forkTranscript({ sessionKey: 'c', parentKey: 'p', turns: 0, at: 5 });
      for (const fork of [
        { sessionKey: 'c', parentKey: 'q', turns: 1, at: 6 },
        { sessionKey: 'own', parentKey: 'p', turns: 1, at: 6 },
      ]) {
        const error: unknown = await ledger.forkTranscript(fork).catch((caught: unknown) => caught);
        expect(isRuntimeError(error) && error.code).toBe('invalid_input');
      }
      expect(await ledger.getFork('c')).toEqual({ sessionKey: 'c', parentKey: 'p', turns: 0, at: 5 });
      expect(await ledger.getFork('own')).toBeUndefined();
      expect(await ledger.listTurns('own')).toEqual([turn('own', 'r9', 0)]);
    });

    it("keeps a subagent run's parent run and call through its close", async () => {
      const ledger = current();
      const child = { ...run('p/sub:1', 'rc'), parentRunId: 'rp', parentCallId: 'call-1' };
      await ledger.openRun(child);
      await ledger.openRun(run('p', 'rp'));
      expect(await ledger.getRun('rc')).toEqual(child);
      const usage = { inputTokens: 1, outputTokens: 2 };
      await ledger.closeRun('rc', { status: 'completed', endedAt: 300, text: 'done', usage });
      expect(await ledger.listRuns('p/sub:1')).toMatchObject([{ parentRunId: 'rp', parentCallId: 'call-1' }]);
      const parent = await ledger.getRun('rp');
      expect(parent).toEqual(run('p', 'rp'));
    });
  });
}
