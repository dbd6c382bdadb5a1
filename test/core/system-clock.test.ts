import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createSystemClock } from '../../src/core/clock.js';

/** A system clock over the fake clock's timers, with a tiny host-timer maximum: chaining without real waits. */
function chainedClock(maxTimerMs: number) {
  const host = fakeClock({ now: 1_000 });
  const clock = createSystemClock({ host, maxTimerMs });
  return { host, clock };
}

describe('createSystemClock', () => {
  it('fires a delay longer than the host maximum at its due time when the timers are chained', async () => {
    const { host, clock } = chainedClock(10);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(host.now()), 35);
    await host.advance(34);
    expect(fired).toEqual([]);
    expect(host.pendingTimers()).toBe(1);
    await host.advance(1);
    expect(fired).toEqual([1_035]);
    expect(host.pendingTimers()).toBe(0);
  });

  it('never gives the host a delay above its maximum when the delay is long', async () => {
    const host = fakeClock();
    const delays: number[] = [];
    const clock = createSystemClock({
      host: {
        now: () => host.now(),
        clearTimeout: (handle) => host.clearTimeout(handle),
        setTimeout: (callback, ms) => {
          delays.push(ms);
          return host.setTimeout(callback, ms);
        },
      },
      maxTimerMs: 100,
    });
    clock.setTimeout(() => undefined, 250);
    await host.runAll();
    expect(delays).toEqual([100, 100, 50]);
  });

  it('uses one host timer when the delay fits the host maximum', async () => {
    const { host, clock } = chainedClock(10);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(host.now()), 7);
    await host.advance(7);
    expect(fired).toEqual([1_007]);
  });

  it('cancels the chain when a chained timer is cleared midway', async () => {
    const { host, clock } = chainedClock(10);
    const fired: string[] = [];
    const handle = clock.setTimeout(() => fired.push('fired'), 50);
    await host.advance(25);
    clock.clearTimeout(handle);
    await host.advance(100);
    expect(fired).toEqual([]);
    expect(host.pendingTimers()).toBe(0);
  });

  it('resolves sleep at the due time when the sleep is longer than the host maximum', async () => {
    const { host, clock } = chainedClock(10);
    let woke = 0;
    const sleeping = clock.sleep(45).then(() => (woke = host.now()));
    await host.advance(44);
    expect(woke).toBe(0);
    await host.advance(1);
    await sleeping;
    expect(woke).toBe(1_045);
  });

  it('rejects sleep and stops the chain when the signal aborts midway', async () => {
    const { host, clock } = chainedClock(10);
    const controller = new AbortController();
    const sleeping = clock.sleep(100, controller.signal).catch((error: unknown) => error);
    await host.advance(30);
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await sleeping).toBe(reason);
    expect(host.pendingTimers()).toBe(0);
  });

  it('does not fire a 2^31 ms timer early when the default host maximum applies', async () => {
    const host = fakeClock();
    const clock = createSystemClock({ host });
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(host.now()), 2 ** 31);
    await host.advance(2 ** 31 - 1);
    expect(fired).toEqual([]);
    await host.advance(1);
    expect(fired).toEqual([2 ** 31]);
  });
});
