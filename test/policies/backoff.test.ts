import { describe, expect, it } from 'vitest';
import { backoffDelay, retryAfterDelay } from '../../src/policies/backoff.js';

const almostOne = () => 0.999_999;

describe('backoffDelay', () => {
  it('doubles the ceiling from 500 ms when attempts grow', () => {
    expect([0, 1, 2, 3, 4].map((attempt) => backoffDelay(attempt, almostOne))).toEqual([
      499, 999, 1999, 3999, 7999,
    ]);
  });

  it('caps the ceiling at 30 s when attempts are many', () => {
    expect(backoffDelay(6, almostOne)).toBe(29_999);
    expect(backoffDelay(50, almostOne)).toBe(29_999);
    expect(backoffDelay(5000, almostOne)).toBe(29_999);
  });

  it('applies full jitter when random returns a fraction', () => {
    expect(backoffDelay(2, () => 0.5)).toBe(1000);
    expect(backoffDelay(3, () => 0.25)).toBe(1000);
    expect(backoffDelay(9, () => 0)).toBe(0);
  });

  it('uses the given base, factor and cap when options are passed', () => {
    const options = { baseMs: 100, factor: 3, capMs: 1000 };
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, almostOne, options))).toEqual([
      99, 299, 899, 999,
    ]);
  });
});

describe('retryAfterDelay', () => {
  it('returns the computed delay when no Retry-After is given', () => {
    expect(retryAfterDelay(undefined, 1234)).toBe(1234);
  });

  it('waits for Retry-After when it is longer than the computed delay', () => {
    expect(retryAfterDelay(10_000, 1234)).toBe(10_000);
  });

  it('keeps the computed delay when Retry-After is shorter', () => {
    expect(retryAfterDelay(1000, 4000)).toBe(4000);
  });

  it('caps Retry-After at 60 s when the provider asks for longer', () => {
    expect(retryAfterDelay(3_600_000, 1234)).toBe(60_000);
    expect(retryAfterDelay(3_600_000, 1234, 20_000)).toBe(20_000);
  });
});
