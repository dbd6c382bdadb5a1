import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { RecoveryStore, RunStore } from '../../src/ledger/index.js';
import { type Current, errorOf, run } from './ledger-fixtures.contract.js';

const usage = { inputTokens: 4, outputTokens: 2 };

/** Runs: open, paused, ended (a paused run closed is no longer what a restart brings back). */
export function describeRunsContract(current: Current<RunStore & Pick<RecoveryStore, 'loadSession'>>): void {
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
}
