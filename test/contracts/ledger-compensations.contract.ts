import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { CompensationStore } from '../../src/ledger/index.js';
import { type Current, compensation, errorOf } from './ledger-fixtures.contract.js';

/** Compensations: what an undo runs, per run by `seq`. */
export function describeCompensationsContract(current: Current<CompensationStore>): void {
  describe('compensations', () => {
    it("lists a run's compensations by seq with every field when appended out of order", async () => {
      const ledger = current();
      const failed = compensation('s1', 'r1', 1, {
        status: 'failed',
        error: { code: 'tool_failed', message: 'refund refused' },
        undoneAt: 900,
      });
      await ledger.appendCompensation(compensation('s1', 'r1', 3));
      await ledger.appendCompensation(compensation('s1', 'r2', 2));
      await ledger.appendCompensation(failed);
      await ledger.appendCompensation(compensation('s1', 'r1', 2, { args: 'plain', result: [1, null] }));
      expect(await ledger.listCompensations('r1')).toEqual([
        failed,
        compensation('s1', 'r1', 2, { args: 'plain', result: [1, null] }),
        compensation('s1', 'r1', 3),
      ]);
      expect(await ledger.listCompensations('r2')).toEqual([compensation('s1', 'r2', 2)]);
      expect(await ledger.listCompensations('ghost')).toEqual([]);
    });

    it('keeps absent optional fields absent when a compensation is read back', async () => {
      await current().appendCompensation(compensation('s1', 'r1', 1));
      const [stored] = await current().listCompensations('r1');
      for (const field of ['error', 'undoneAt']) expect(stored).not.toHaveProperty(field);
    });

    it('rejects with invalid_input and keeps the first when a (runId, seq) is appended twice', async () => {
      const ledger = current();
      await ledger.appendCompensation(compensation('s1', 'r1', 1));
      const again = compensation('s1', 'r1', 1, { tool: 'other' });
      expect(isRuntimeError(await errorOf(ledger.appendCompensation(again)), 'invalid_input')).toBe(true);
      expect(await ledger.listCompensations('r1')).toEqual([compensation('s1', 'r1', 1)]);
    });

    it('records each undo attempt, the error of a failed one replaced by the next', async () => {
      const ledger = current();
      await ledger.appendCompensation(compensation('s1', 'r1', 1));
      await ledger.appendCompensation(compensation('s1', 'r1', 2));
      const error = { code: 'tool_failed' as const, message: 'timed out' };
      await ledger.updateCompensation('r1', 1, { status: 'failed', error, undoneAt: 700 });
      expect((await ledger.listCompensations('r1'))[0]).toEqual({
        ...compensation('s1', 'r1', 1),
        status: 'failed',
        error,
        undoneAt: 700,
      });
      await ledger.updateCompensation('r1', 1, { status: 'done', undoneAt: 800 });
      expect(await ledger.listCompensations('r1')).toEqual([
        { ...compensation('s1', 'r1', 1), status: 'done', undoneAt: 800 },
        compensation('s1', 'r1', 2),
      ]);
    });

    it('rejects with not_found when the compensation to update was never recorded', async () => {
      const ledger = current();
      await ledger.appendCompensation(compensation('s1', 'r1', 1));
      for (const [runId, seq] of [
        ['r1', 2],
        ['ghost', 1],
      ] as const) {
        const error = await errorOf(ledger.updateCompensation(runId, seq, { status: 'done', undoneAt: 1 }));
        expect(isRuntimeError(error, 'not_found')).toBe(true);
      }
    });

    it('keeps its own copy when the caller mutates the record after appending it', async () => {
      const record = compensation('s1', 'r1', 1);
      await current().appendCompensation(record);
      (record.args as { room: string }).room = 'mutated';
      (record.result as { total: { amount: number } }).total.amount = 0;
      expect(await current().listCompensations('r1')).toEqual([compensation('s1', 'r1', 1)]);
    });
  });
}
