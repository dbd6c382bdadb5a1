import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { parsePlan, parsePlanOptions, planOptionsSchema, planSchema } from '../../src/plans/plan-schema.js';
import { errorOf } from './plan-fixtures.js';

describe('planSchema', () => {
  it('accepts a plan and defaults args to {} when a step has none', () => {
    const plan = planSchema.parse({ steps: [{ id: 'step-1', tool: 'orders.list' }] });
    expect(plan).toEqual({ steps: [{ id: 'step-1', tool: 'orders.list', args: {} }] });
  });

  it('keeps nested args and dependsOn when they are given', () => {
    const step = { id: 'a_2', tool: 't', args: { q: { nested: [1, '$x'] } }, dependsOn: ['b'] };
    expect(planSchema.parse({ steps: [step] }).steps[0]).toEqual(step);
  });

  it('refuses a plan when it has no steps', () => {
    expect(planSchema.safeParse({ steps: [] }).success).toBe(false);
  });

  it('refuses an id when it has characters outside [A-Za-z0-9_-] or is longer than 64', () => {
    for (const id of ['', 'a.b', 'a b', '$a', 'x'.repeat(65)]) {
      expect(planSchema.safeParse({ steps: [{ id, tool: 't' }] }).success).toBe(false);
    }
    expect(planSchema.safeParse({ steps: [{ id: 'x'.repeat(64), tool: 't' }] }).success).toBe(true);
  });

  it('refuses unknown keys when a plan or step has a misspelt field', () => {
    expect(planSchema.safeParse({ steps: [{ id: 'a', tool: 't', depends: ['b'] }] }).success).toBe(false);
    expect(planSchema.safeParse({ steps: [{ id: 'a', tool: 't' }], mode: 'auto' }).success).toBe(false);
  });

  it('refuses a step when the tool is empty or args is not a record', () => {
    expect(planSchema.safeParse({ steps: [{ id: 'a', tool: '' }] }).success).toBe(false);
    expect(planSchema.safeParse({ steps: [{ id: 'a', tool: 't', args: [1] }] }).success).toBe(false);
  });
});

describe('parsePlan', () => {
  it('throws invalid_input naming the path when a step id is bad', () => {
    const error = errorOf(() =>
      parsePlan({
        steps: [
          { id: 'a', tool: 't' },
          { id: 'b c', tool: 't' },
        ],
      }),
    );
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toMatch(/^plan\.steps\.1\.id: /);
  });

  it('throws invalid_input naming every bad field when several are wrong', () => {
    const error = errorOf(() => parsePlan({ steps: [{ id: '', tool: '' }] }));
    expect((error as Error).message).toContain('plan.steps.0.id: ');
    expect((error as Error).message).toContain('plan.steps.0.tool: ');
  });

  it('throws invalid_input naming plan when the input is not an object', () => {
    const error = errorOf(() => parsePlan('steps'));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toMatch(/^plan: /);
  });
});

describe('planOptionsSchema', () => {
  it('fills in every default when the options are empty', () => {
    expect(planOptionsSchema.parse({})).toEqual({
      mode: 'auto',
      maxParallel: 5,
      timeoutMs: 30_000,
      retries: 3,
      retryBaseMs: 500,
      failFast: false,
    });
  });

  it('accepts the bounds when each limit is at its edge', () => {
    const low = { maxParallel: 1, timeoutMs: 1, retries: 0 };
    const high = { maxParallel: 64, timeoutMs: 3_600_000, retries: 10 };
    expect(planOptionsSchema.safeParse(low).success).toBe(true);
    expect(planOptionsSchema.safeParse(high).success).toBe(true);
  });

  it('refuses values when they are out of range, fractional or of an unknown mode', () => {
    for (const bad of [
      { maxParallel: 0 },
      { maxParallel: 65 },
      { maxParallel: 1.5 },
      { timeoutMs: 0 },
      { timeoutMs: 3_600_001 },
      { retries: -1 },
      { retries: 11 },
      { mode: 'later' },
      { failFast: 'yes' },
      { approvedSteps: 'a' },
      { parallel: 2 },
    ]) {
      expect(planOptionsSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('parsePlanOptions', () => {
  it('returns the defaults when the input is undefined', () => {
    expect(parsePlanOptions(undefined)).toEqual(planOptionsSchema.parse({}));
  });

  it('keeps approvedSteps and the mode when they are given', () => {
    const options = parsePlanOptions({ mode: 'approval', approvedSteps: ['a'] });
    expect(options.mode).toBe('approval');
    expect(options.approvedSteps).toEqual(['a']);
  });

  it('throws invalid_input naming the field when a value is bad', () => {
    const error = errorOf(() => parsePlanOptions({ maxParallel: 0 }));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toMatch(/^options\.maxParallel: /);
  });
});
