import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { ToolCallRecord, ToolCallStore } from '../../src/ledger/index.js';
import { type Current, errorOf, toolCall } from './ledger-fixtures.contract.js';

/** The calls of paused tool batches: recorded, updated, listed and remembered (loadSession: the recovery suite). */
export function describeToolCallsContract(current: Current<ToolCallStore>): void {
  describe('tool calls', () => {
    it("round-trips every field and lists a run's calls by turn then position when put out of order", async () => {
      const ledger = current();
      const settled = toolCall('s1', 'r1', 1, 1, {
        kind: 'ran',
        status: 'settled',
        decision: {
          decision: 'edit',
          args: { q: 'edited', list: [{ a: 1 }] },
          message: 'ok',
          remember: 'run',
        },
        result: { content: 'found 3', isError: false },
        resolvedAt: 350,
      });
      const deferred = toolCall('s1', 'r1', 2, 0, { kind: 'deferred', tool: 'lookup' });
      await ledger.putToolCalls([deferred, settled]);
      await ledger.putToolCalls([toolCall('s1', 'r2', 1, 0), toolCall('s1', 'r1', 1, 0)]);
      expect(await ledger.listToolCalls('r1')).toEqual([toolCall('s1', 'r1', 1, 0), settled, deferred]);
      expect(await ledger.listToolCalls('r2')).toEqual([toolCall('s1', 'r2', 1, 0)]);
      expect(await ledger.listToolCalls('ghost')).toEqual([]);
    });

    it('keeps absent optional fields absent when a call is read back', async () => {
      await current().putToolCalls([toolCall('s1', 'r1', 1, 0)]);
      const [stored] = await current().listToolCalls('r1');
      for (const field of ['decision', 'result', 'resolvedAt']) expect(stored).not.toHaveProperty(field);
    });

    it('rejects with invalid_input and writes nothing of the batch when a key is already recorded', async () => {
      const ledger = current();
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0)]);
      const refused = [toolCall('s1', 'r1', 1, 1), toolCall('s1', 'r1', 1, 0, { tool: 'other' })];
      expect(isRuntimeError(await errorOf(ledger.putToolCalls(refused)), 'invalid_input')).toBe(true);
      const twice = [toolCall('s1', 'r1', 2, 0), toolCall('s1', 'r1', 2, 0, { tool: 'other' })];
      expect(isRuntimeError(await errorOf(ledger.putToolCalls(twice)), 'invalid_input')).toBe(true);
      expect(await ledger.listToolCalls('r1')).toEqual([toolCall('s1', 'r1', 1, 0)]);
    });

    it('changes only the fields given when a call is updated twice', async () => {
      const ledger = current();
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0), toolCall('s1', 'r1', 1, 1)]);
      const decision = { decision: 'edit' as const, args: { q: 'edited' }, remember: 'session' as const };
      await ledger.updateToolCall(
        { runId: 'r1', turn: 1, position: 0 },
        { status: 'approved', decision, resolvedAt: 500 },
      );
      const result = { content: 'done', isError: true };
      await ledger.updateToolCall({ runId: 'r1', turn: 1, position: 0 }, { status: 'settled', result });
      expect(await ledger.listToolCalls('r1')).toEqual([
        { ...toolCall('s1', 'r1', 1, 0), status: 'settled', decision, result, resolvedAt: 500 },
        toolCall('s1', 'r1', 1, 1),
      ]);
    });

    it('records a call asked again in doubt: its kind and request time change, the rest is kept', async () => {
      const ledger = current();
      const key = { runId: 'r1', turn: 1, position: 0 };
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0, { kind: 'approval' })]);
      const decision = { decision: 'approve' as const };
      await ledger.updateToolCall(key, { status: 'approved', decision, resolvedAt: 200 });
      await ledger.updateToolCall(key, { status: 'pending', kind: 'in_doubt', requestedAt: 9_000 });
      expect(await ledger.listToolCalls('r1')).toEqual([
        {
          ...toolCall('s1', 'r1', 1, 0),
          kind: 'in_doubt',
          status: 'pending',
          decision,
          resolvedAt: 200,
          requestedAt: 9_000,
        },
      ]);
    });

    it('rejects with not_found when the call to update was never recorded', async () => {
      const ledger = current();
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0)]);
      for (const key of [
        { runId: 'r1', turn: 1, position: 1 },
        { runId: 'r1', turn: 2, position: 0 },
        { runId: 'ghost', turn: 1, position: 0 },
      ]) {
        const error = await errorOf(ledger.updateToolCall(key, { status: 'cancelled' }));
        expect(isRuntimeError(error, 'not_found')).toBe(true);
      }
      expect(await ledger.listToolCalls('r1')).toEqual([toolCall('s1', 'r1', 1, 0)]);
    });

    it('keeps its own copy when the caller mutates what it put or updated', async () => {
      const ledger = current();
      const record = toolCall('s1', 'r1', 1, 0);
      await ledger.putToolCalls([record]);
      (record.args as { q: string }).q = 'mutated';
      const decision = { decision: 'edit' as const, args: { q: 'edited' } };
      await ledger.updateToolCall({ runId: 'r1', turn: 1, position: 0 }, { status: 'approved', decision });
      decision.args.q = 'mutated';
      const [stored] = await ledger.listToolCalls('r1');
      expect(stored?.args).toEqual(toolCall('s1', 'r1', 1, 0).args);
      expect(stored?.decision?.args).toEqual({ q: 'edited' });
    });

    it('leaves a record already handed out unchanged when its call is updated', async () => {
      const ledger = current();
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0)]);
      const [before] = await ledger.listToolCalls('r1');
      await ledger.updateToolCall({ runId: 'r1', turn: 1, position: 0 }, { status: 'cancelled' });
      expect(before?.status).toBe('pending');
      expect((await ledger.listToolCalls('r1'))[0]?.status).toBe('cancelled');
    });
  });

  describe('rememberedTools', () => {
    /** A call already decided: approved (or as given) with `remember`. */
    const decided = (runId: string, position: number, tool: string, extra: Partial<ToolCallRecord>) =>
      toolCall(runId === 'r9' ? 's2' : 's1', runId, 1, position, { tool, status: 'approved', ...extra });

    it('returns run-remembered tools of the run and session-remembered ones of any run of the session', async () => {
      const ledger = current();
      const approve = (remember?: 'run' | 'session') => ({
        decision: { decision: 'approve' as const, ...(remember === undefined ? {} : { remember }) },
      });
      await ledger.putToolCalls([
        decided('r1', 0, 'zeta', approve('run')),
        decided('r1', 1, 'alpha', approve('run')),
        decided('r1', 2, 'zeta', approve('run')),
        decided('r1', 3, 'fetch', approve('session')),
        decided('r1', 4, 'plain', approve()),
        decided('r1', 5, 'drop', {
          status: 'rejected',
          decision: { decision: 'reject', remember: 'session' },
        }),
      ]);
      await ledger.putToolCalls([
        decided('r2', 0, 'calendar', approve('run')),
        decided('r2', 1, 'mail', approve('session')),
        decided('r2', 2, 'fetch', approve('session')),
      ]);
      await ledger.putToolCalls([decided('r9', 0, 'shell', approve('session'))]);
      expect(await ledger.rememberedTools('s1', 'r1')).toEqual({
        run: ['alpha', 'zeta'],
        session: ['fetch', 'mail'],
      });
      expect(await ledger.rememberedTools('s1', 'r2')).toEqual({
        run: ['calendar'],
        session: ['fetch', 'mail'],
      });
      expect(await ledger.rememberedTools('s2', 'r9')).toEqual({ run: [], session: ['shell'] });
      expect(await ledger.rememberedTools('nobody', 'ghost')).toEqual({ run: [], session: [] });
    });

    it('follows the latest decision when a call is approved by an update', async () => {
      const ledger = current();
      await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0, { tool: 'write' }), toolCall('s1', 'r1', 1, 1)]);
      const key = { runId: 'r1', turn: 1, position: 0 };
      await ledger.updateToolCall(key, {
        status: 'approved',
        decision: { decision: 'approve', remember: 'run' },
      });
      expect(await ledger.rememberedTools('s1', 'r1')).toEqual({ run: ['write'], session: [] });
      await ledger.updateToolCall(key, { status: 'settled', result: { content: 'ok', isError: false } });
      expect(await ledger.rememberedTools('s1', 'r1')).toEqual({ run: ['write'], session: [] });
      await ledger.updateToolCall(key, { status: 'approved', decision: { decision: 'approve' } });
      expect(await ledger.rememberedTools('s1', 'r1')).toEqual({ run: [], session: [] });
    });
  });
}
