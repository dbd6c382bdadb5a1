import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { TurnRecord } from '../../src/ledger/index.js';
import { type CurrentLedger, errorOf, run, turn } from './ledger-fixtures.contract.js';

const usage = { inputTokens: 4, outputTokens: 2 };

/** Runs (open, paused, ended) and turns (the transcript). */
export function describeRunsContract(current: CurrentLedger): void {
  describe('runs', () => {
    it('round-trips an open run and closes it with its outcome', async () => {
      const ledger = current();
      expect(await ledger.getRun('r1')).toBeUndefined();
      await ledger.openRun(run('s1', 'r1'));
      expect(await ledger.getRun('r1')).toEqual(run('s1', 'r1'));
      const close = {
        status: 'failed' as const,
        endedAt: 900,
        text: 'partial',
        usage: { inputTokens: 12, outputTokens: 3 },
        error: { code: 'provider_unavailable' as const, message: 'overloaded' },
      };
      await ledger.closeRun('r1', close);
      expect(await ledger.getRun('r1')).toEqual({ ...run('s1', 'r1'), ...close });
    });

    it('lists only runs still running when listOpenRuns is called', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1', 100));
      await ledger.openRun(run('s2', 'r2', 200));
      await ledger.openRun(run('s1', 'r3', 300));
      const usage = { inputTokens: 1, outputTokens: 1 };
      await ledger.closeRun('r2', { status: 'completed', endedAt: 400, text: 'done', usage });
      const open = await ledger.listOpenRuns();
      expect(open.map((record) => record.runId).sort()).toEqual(['r1', 'r3']);
      expect(open.every((record) => record.status === 'running')).toBe(true);
    });

    it("lists a session's runs in start order without other sessions' runs", async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1', 100));
      await ledger.openRun(run('s2', 'r2', 200));
      await ledger.openRun(run('s1', 'r3', 300));
      expect((await ledger.listRuns('s1')).map((record) => record.runId)).toEqual(['r1', 'r3']);
      expect(await ledger.listRuns('nobody')).toEqual([]);
    });

    it('rejects with not_found when closing a run that was never opened', async () => {
      const close = {
        status: 'completed' as const,
        endedAt: 1,
        text: '',
        usage: { inputTokens: 0, outputTokens: 0 },
      };
      expect(isRuntimeError(await errorOf(current().closeRun('ghost', close)), 'not_found')).toBe(true);
    });

    it('keeps its own copy when the caller mutates the run after opening it', async () => {
      const record = run('s1', 'r1');
      await current().openRun(record);
      (record.messageIds as string[]).push('m9');
      (record.usage as { inputTokens: number }).inputTokens = 999;
      expect(await current().getRun('r1')).toEqual(run('s1', 'r1'));
    });
  });

  describe('paused runs', () => {
    it('lists paused runs in start order across sessions and keeps them out of listOpenRuns', async () => {
      const ledger = current();
      for (const [key, runId, startedAt] of [
        ['s1', 'r1', 100],
        ['s2', 'r2', 200],
        ['s1', 'r3', 300],
        ['s3', 'r4', 400],
      ] as const) {
        await ledger.openRun(run(key, runId, startedAt));
      }
      await ledger.openRun({ ...run('s4', 'r5', 500), status: 'awaiting_approval' });
      await ledger.setRunStatus('r3', 'awaiting_tool_results');
      await ledger.setRunStatus('r1', 'awaiting_approval');
      expect(await ledger.listPausedRuns()).toEqual([
        { ...run('s1', 'r1', 100), status: 'awaiting_approval' },
        { ...run('s1', 'r3', 300), status: 'awaiting_tool_results' },
        { ...run('s4', 'r5', 500), status: 'awaiting_approval' },
      ]);
      expect((await ledger.listOpenRuns()).map((record) => record.runId)).toEqual(['r2', 'r4']);
      await ledger.setRunStatus('r1', 'running');
      await ledger.setRunStatus('r3', 'awaiting_approval');
      expect((await ledger.listPausedRuns()).map((record) => [record.runId, record.status])).toEqual([
        ['r3', 'awaiting_approval'],
        ['r5', 'awaiting_approval'],
      ]);
      expect((await ledger.listOpenRuns()).map((record) => record.runId)).toEqual(['r1', 'r2', 'r4']);
      expect(await ledger.getRun('r1')).toEqual(run('s1', 'r1', 100));
    });

    it('stores the progress given with a status change and keeps it when none is given', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1'));
      await ledger.setRunStatus('r1', 'awaiting_tool_results', { text: 'so far', usage, cost: 0.25 });
      const paused = { ...run('s1', 'r1'), status: 'awaiting_tool_results' as const };
      expect(await ledger.getRun('r1')).toEqual({ ...paused, text: 'so far', usage, cost: 0.25 });
      await ledger.setRunStatus('r1', 'running');
      expect(await ledger.getRun('r1')).toEqual({
        ...paused,
        status: 'running',
        text: 'so far',
        usage,
        cost: 0.25,
      });
      const more = { inputTokens: 9, outputTokens: 5 };
      await ledger.setRunStatus('r1', 'awaiting_approval', { text: 'so far, more', usage: more, cost: 0.5 });
      expect(await ledger.getRun('r1')).toMatchObject({ text: 'so far, more', usage: more, cost: 0.5 });
    });

    it('rejects setRunStatus with not_found when the run is unknown or has ended', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1'));
      await ledger.closeRun('r1', { status: 'completed', endedAt: 900, text: 'done', usage });
      for (const runId of ['r1', 'ghost']) {
        const error = await errorOf(ledger.setRunStatus(runId, 'awaiting_approval'));
        expect(isRuntimeError(error, 'not_found')).toBe(true);
      }
      expect((await ledger.getRun('r1'))?.status).toBe('completed');
      expect(await ledger.listPausedRuns()).toEqual([]);
    });

    it('closes a paused run when it is aborted', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1'));
      await ledger.setRunStatus('r1', 'awaiting_approval');
      await ledger.closeRun('r1', { status: 'aborted', endedAt: 900, text: 'partial', usage });
      expect(await ledger.getRun('r1')).toEqual({
        ...run('s1', 'r1'),
        status: 'aborted',
        endedAt: 900,
        text: 'partial',
        usage,
      });
      expect(await ledger.listPausedRuns()).toEqual([]);
      expect(await ledger.listOpenRuns()).toEqual([]);
      expect(await ledger.loadSession('s1')).not.toHaveProperty('paused');
    });
  });

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
