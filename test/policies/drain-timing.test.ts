import { describe, expect, it } from 'vitest';
import { drainDueAt } from '../../src/policies/drain-timing.js';

const timing = { runEndedAt: 10_000, debounceMs: 1000, maxWaitMs: 5000 };

describe('drainDueAt', () => {
  it('waits debounceMs after the last message when it arrived after the run ended', () => {
    // Messages at 9_000 and 10_500: quiet from 10_500 + 1000.
    expect(drainDueAt({ ...timing, lastEnqueuedAt: 10_500 })).toBe(11_500);
  });

  it('drains debounceMs after the last message when that message arrived during the run', () => {
    expect(drainDueAt({ ...timing, lastEnqueuedAt: 9_500 })).toBe(10_500);
  });

  it('drains at once when the last message is older than debounceMs at run end', () => {
    expect(drainDueAt({ ...timing, lastEnqueuedAt: 8_000 })).toBe(10_000);
  });

  it('caps the wait at maxWaitMs after the run ended when messages keep coming every 800 ms', () => {
    const arrivals = Array.from({ length: 8 }, (_, index) => 10_000 + index * 800);
    const dueTimes = arrivals.map((lastEnqueuedAt) => drainDueAt({ ...timing, lastEnqueuedAt }));
    expect(dueTimes).toEqual([11_000, 11_800, 12_600, 13_400, 14_200, 15_000, 15_000, 15_000]);
  });

  it('drains when the run ended when debounce and maxWait are zero', () => {
    expect(drainDueAt({ lastEnqueuedAt: 10_400, runEndedAt: 10_000, debounceMs: 0, maxWaitMs: 0 })).toBe(
      10_000,
    );
  });
});
