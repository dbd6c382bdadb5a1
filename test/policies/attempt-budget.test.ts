import { describe, expect, it } from 'vitest';
import { maxAttempts } from '../../src/policies/attempt-budget.js';

describe('maxAttempts', () => {
  it.each([
    [0, 32],
    [1, 32],
    [2, 40],
    [3, 48],
    [16, 152],
    [17, 160],
    [100, 160],
  ])('allows the clamped budget when there are %i profiles', (profiles, attempts) => {
    expect(maxAttempts(profiles)).toBe(attempts);
  });

  it('falls back to the floor of 32 when the count is negative or NaN', () => {
    expect(maxAttempts(-5)).toBe(32);
    expect(maxAttempts(Number.NaN)).toBe(32);
  });

  it('stays at the cap of 160 when the count is infinite', () => {
    expect(maxAttempts(Number.POSITIVE_INFINITY)).toBe(160);
  });
});
