import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { PlanRecord, PlanStore, StepResultRecord } from '../../src/ledger/index.js';
import { type Current, errorOf, plan, stepResult } from './ledger-fixtures.contract.js';

/** A step result that carries no data at all (the key is absent, not undefined). */
function withoutData(runId: string, stepId: string, seq: number, extra: Partial<StepResultRecord> = {}) {
  const { data: _data, ...record } = stepResult(runId, stepId, seq, extra);
  return record;
}

/** Plan runs: their definitions, approvals and the results of their finished steps. */
export function describePlansContract(current: Current<PlanStore>): void {
  describe('plans', () => {
    it('round-trips a plan with its JSON and approved steps and returns undefined for a run without one', async () => {
      const ledger = current();
      const approved = plan('s1', 'r1', { approvedSteps: ['send', 'fetch'] });
      const scalar = plan('s2', 'r2', {
        plan: [1, 'two', null, { three: [3] }],
        options: null,
        createdAt: 9,
      });
      await ledger.putPlan(approved);
      await ledger.putPlan(scalar);
      expect(await ledger.getPlan('r1')).toEqual(approved);
      expect(await ledger.getPlan('r2')).toEqual(scalar);
      expect(await ledger.getPlan('ghost')).toBeUndefined();
    });

    it('rejects with invalid_input and keeps the first when a run already has a plan', async () => {
      const ledger = current();
      await ledger.putPlan(plan('s1', 'r1'));
      const again = plan('s2', 'r1', { plan: { steps: [] }, approvedSteps: ['fetch'], createdAt: 900 });
      expect(isRuntimeError(await errorOf(ledger.putPlan(again)), 'invalid_input')).toBe(true);
      expect(await ledger.getPlan('r1')).toEqual(plan('s1', 'r1'));
    });

    it('appends new step ids in order and keeps approved ones in place when steps are approved', async () => {
      const ledger = current();
      await ledger.putPlan(plan('s1', 'r1', { approvedSteps: ['b'] }));
      await ledger.putPlan(plan('s1', 'r2'));
      await ledger.approvePlanSteps('r1', ['c', 'b', 'a', 'c']);
      expect(await ledger.getPlan('r1')).toEqual(plan('s1', 'r1', { approvedSteps: ['b', 'c', 'a'] }));
      await ledger.approvePlanSteps('r1', ['a', 'd', 'b']);
      await ledger.approvePlanSteps('r1', []);
      expect(await ledger.getPlan('r1')).toEqual(plan('s1', 'r1', { approvedSteps: ['b', 'c', 'a', 'd'] }));
      expect(await ledger.getPlan('r2')).toEqual(plan('s1', 'r2'));
    });

    it('rejects with not_found and writes nothing when steps of a run without a plan are approved', async () => {
      const ledger = current();
      await ledger.putPlan(plan('s1', 'r1'));
      const error = await errorOf(ledger.approvePlanSteps('ghost', ['fetch']));
      expect(isRuntimeError(error, 'not_found')).toBe(true);
      expect(await ledger.getPlan('ghost')).toBeUndefined();
      expect(await ledger.getPlan('r1')).toEqual(plan('s1', 'r1'));
    });

    it('keeps its own copy when the caller mutates a plan it put or was handed', async () => {
      const ledger = current();
      const record = plan('s1', 'r1', { approvedSteps: ['fetch'] });
      await ledger.putPlan(record);
      (record.plan as { steps: [{ id: string }] }).steps[0].id = 'mutated';
      (record.options as { tags: unknown[] }).tags.push('mutated');
      (record.approvedSteps as string[]).push('mutated');
      const handed = (await ledger.getPlan('r1')) as PlanRecord;
      (handed.plan as { steps: unknown[] }).steps.length = 0;
      (handed.approvedSteps as string[]).length = 0;
      expect(await ledger.getPlan('r1')).toEqual(plan('s1', 'r1', { approvedSteps: ['fetch'] }));
    });

    it('leaves a plan already handed out unchanged when its steps are approved', async () => {
      const ledger = current();
      await ledger.putPlan(plan('s1', 'r1'));
      const before = await ledger.getPlan('r1');
      await ledger.approvePlanSteps('r1', ['send']);
      expect(before?.approvedSteps).toEqual([]);
      expect((await ledger.getPlan('r1'))?.approvedSteps).toEqual(['send']);
    });
  });

  describe('step results', () => {
    it("lists a run's step results by seq with every field when put out of order", async () => {
      const ledger = current();
      const failed = withoutData('r1', 'fetch', 1, {
        success: false,
        error: { code: 'tool_failed', message: 'search is down' },
        metadata: { executionTime: 1234, retries: 3, startedAt: 601 },
      });
      const listed = stepResult('r1', 'fetch.0', 2, { data: [1, 'two', null, { three: [3] }] });
      await ledger.putStepResult(stepResult('r1', 'send', 3));
      await ledger.putStepResult(stepResult('r2', 'send', 1));
      await ledger.putStepResult(failed);
      await ledger.putStepResult(listed);
      expect(await ledger.listStepResults('r1')).toEqual([failed, listed, stepResult('r1', 'send', 3)]);
      expect(await ledger.listStepResults('r2')).toEqual([stepResult('r2', 'send', 1)]);
      expect(await ledger.listStepResults('ghost')).toEqual([]);
    });

    it('keeps absent data absent and null, false, zero or empty data as given when read back', async () => {
      const ledger = current();
      const values: unknown[] = [null, false, 0, '', [], {}];
      await ledger.putStepResult(withoutData('r1', 'none', 1));
      for (const [index, data] of values.entries()) {
        await ledger.putStepResult(stepResult('r1', `step-${index}`, index + 2, { data }));
      }
      const [absent, ...rest] = await ledger.listStepResults('r1');
      expect(absent).not.toHaveProperty('data');
      expect(absent).not.toHaveProperty('error');
      expect(rest.map((record) => record.data)).toEqual(values);
      for (const record of rest) expect(record).toHaveProperty('data');
    });

    it('rejects with invalid_input and writes nothing when a step id or a seq is recorded again', async () => {
      const ledger = current();
      await ledger.putStepResult(stepResult('r1', 'fetch', 1));
      const sameStep = stepResult('r1', 'fetch', 2, { success: false });
      const sameSeq = stepResult('r1', 'send', 1, { data: 'other' });
      expect(isRuntimeError(await errorOf(ledger.putStepResult(sameStep)), 'invalid_input')).toBe(true);
      expect(isRuntimeError(await errorOf(ledger.putStepResult(sameSeq)), 'invalid_input')).toBe(true);
      expect(await ledger.listStepResults('r1')).toEqual([stepResult('r1', 'fetch', 1)]);
      // Neither refused record took its key: seq 2 and step "send" are still free, and other runs are apart.
      await ledger.putStepResult(stepResult('r1', 'send', 2));
      await ledger.putStepResult(stepResult('r2', 'fetch', 1));
      expect(await ledger.listStepResults('r1')).toEqual([
        stepResult('r1', 'fetch', 1),
        stepResult('r1', 'send', 2),
      ]);
    });

    it('keeps its own copy when the caller mutates a step result it put or was handed', async () => {
      const ledger = current();
      const error = { code: 'timeout' as const, message: 'too slow' };
      const record = stepResult('r1', 'fetch', 1, { success: false, error });
      await ledger.putStepResult(record);
      (record.data as { nested: { ok: boolean } }).nested.ok = false;
      (record.metadata as { retries: number }).retries = 99;
      (error as { message: string }).message = 'mutated';
      const [handed] = await ledger.listStepResults('r1');
      (handed?.data as { items: unknown[] }).items.length = 0;
      (handed?.error as { message: string }).message = 'mutated';
      const expected = stepResult('r1', 'fetch', 1, {
        success: false,
        error: { code: 'timeout', message: 'too slow' },
      });
      expect(await ledger.listStepResults('r1')).toEqual([expected]);
    });
  });
}
