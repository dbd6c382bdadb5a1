import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { settlingClock } from './settling-clock.js';
import { ledgerSettled, trackLedger } from './settling-ledger.js';

/** More event-loop turns than the fake clock settles with, so a call still pending after them is a slow one. */
async function manyTurns(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A "ledger" whose write resolves when the test says so, as a round trip over a socket would. */
function slowLedger() {
  const reply = createDeferred<string>();
  const ledger = trackLedger({ write: (): Promise<string> => reply.promise });
  return { ledger, reply };
}

describe('settlingClock', () => {
  it('fires a timer scheduled after a slow ledger write at its due time within the same advance', async () => {
    const clock = settlingClock(fakeClock({ now: 0 }), ledgerSettled);
    const { ledger, reply } = slowLedger();
    const fired: number[] = [];
    clock.setTimeout(() => {
      void ledger.write().then(() => clock.setTimeout(() => fired.push(clock.now()), 10));
    }, 5);
    const advancing = clock.advance(20);
    await manyTurns();
    expect(fired).toEqual([]);
    reply.resolve('ok');
    await advancing;
    expect(fired).toEqual([15]);
    expect(clock.now()).toBe(20);
  });

  it('runs every timer that a chain of slow writes schedules in runAll, and keeps infinite ones', async () => {
    const clock = settlingClock(fakeClock({ now: 0 }), ledgerSettled);
    const { ledger, reply } = slowLedger();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(-1), Number.POSITIVE_INFINITY);
    void ledger.write().then(() => clock.setTimeout(() => fired.push(clock.now()), 100));
    const running = clock.runAll();
    await manyTurns();
    reply.resolve('ok');
    await running;
    expect(fired).toEqual([100]);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('answers a bad advance with invalid_input and a runaway runAll with internal, as the fake clock does', async () => {
    const clock = settlingClock(fakeClock({ now: 0 }), ledgerSettled);
    await expect(clock.advance(-1)).rejects.toMatchObject({ code: 'invalid_input' });
    const again = (): void => {
      clock.setTimeout(again, 1);
    };
    again();
    await expect(clock.runAll({ maxTimers: 50 })).rejects.toMatchObject({ code: 'internal' });
  });
});

describe('trackLedger', () => {
  it('passes results and rejections through and lets ledgerSettled wait for a rejected call too', async () => {
    const refusal = createDeferred<never>();
    const ledger = trackLedger({ read: (value: number) => value * 2, fail: () => refusal.promise });
    expect(ledger.read(21)).toBe(42);
    const failing = ledger.fail();
    let settled = false;
    const waiting = ledgerSettled().then(() => {
      settled = true;
    });
    await manyTurns();
    expect(settled).toBe(false);
    refusal.reject(new Error('refused'));
    await expect(failing).rejects.toThrow('refused');
    await waiting;
    expect(settled).toBe(true);
  });
});
