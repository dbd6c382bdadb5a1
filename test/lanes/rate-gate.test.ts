import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import type { Clock } from '../../src/core/clock.js';
import { createRateGate } from '../../src/lanes/rate-gate.js';

describe('createRateGate', () => {
  it('takes starts at once until `limit` were taken within the interval', () => {
    const clock = fakeClock();
    const gate = createRateGate({ limit: 3, intervalMs: 100 }, clock);
    expect([gate.tryTake(), gate.tryTake(), gate.tryTake(), gate.tryTake()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('serves waiters in arrival order and refuses tryTake while someone waits', async () => {
    const clock = fakeClock();
    const gate = createRateGate({ limit: 1, intervalMs: 100 }, clock);
    expect(gate.tryTake()).toBe(true);
    const order: string[] = [];
    const waits = ['a', 'b'].map((name) => gate.take().then(() => order.push(`${name}@${clock.now()}`)));
    expect(gate.waiting).toBe(2);
    await clock.advance(100);
    // A start is free again at 200, but `b` waits first.
    await clock.advance(100);
    expect(order).toEqual(['a@100', 'b@200']);
    expect(gate.tryTake()).toBe(false);
    await Promise.all(waits);
    expect(gate.waiting).toBe(0);
  });

  it('waits one interval, not the jump, when the clock went back', async () => {
    const fake = fakeClock();
    let offset = 5_000;
    const clock: Clock = { ...fake, now: () => fake.now() + offset };
    const gate = createRateGate({ limit: 1, intervalMs: 1000 }, clock);
    expect(gate.tryTake()).toBe(true);
    offset = 0;
    let taken = false;
    const waiting = gate.take().then(() => {
      taken = true;
    });
    await fake.advance(999);
    expect(taken).toBe(false);
    await fake.advance(1);
    expect(taken).toBe(true);
    await waiting;
  });

  it('rejects at once with the reason when the signal is already aborted', async () => {
    const gate = createRateGate({ limit: 1, intervalMs: 100 }, fakeClock());
    const reason = new Error('stop');
    await expect(gate.take(AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(gate.waiting).toBe(0);
  });
});
