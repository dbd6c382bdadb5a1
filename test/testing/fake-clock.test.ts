import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { fakeClock } from 'agentlanes/testing';
import { isRuntimeError, RuntimeError } from '../../src/core/errors.js';

describe('fakeClock', () => {
  it('starts at the given time when now is passed', () => {
    expect(fakeClock({ now: 5_000 }).now()).toBe(5_000);
    expect(fakeClock().now()).toBe(0);
  });

  it('fires timers in time order at their due time when advanced past them', async () => {
    const clock = fakeClock({ now: 100 });
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    await clock.advance(25);
    expect(fired).toEqual(['a@110', 'b@120']);
    expect(clock.now()).toBe(125);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('fires timers in scheduling order when they are due at the same time', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    for (let index = 0; index < 20; index++) clock.setTimeout(() => fired.push(index), 5);
    await clock.advance(5);
    expect(fired).toEqual([...Array(20).keys()]);
  });

  it('treats a negative or NaN delay as zero', async () => {
    const clock = fakeClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('negative'), -10);
    clock.setTimeout(() => fired.push('nan'), Number.NaN);
    await clock.advance(0);
    expect(fired).toEqual(['negative', 'nan']);
  });

  it('fires timers scheduled during advance when they fall due within the window', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
      clock.setTimeout(() => fired.push(clock.now()), 50);
    }, 10);
    await clock.advance(20);
    expect(fired).toEqual([10, 15]);
    await clock.advance(40);
    expect(fired).toEqual([10, 15, 60]);
  });

  it('settles promise chains between timers when an async function sleeps twice', async () => {
    const clock = fakeClock();
    const steps: number[] = [];
    const work = async (): Promise<void> => {
      await Promise.resolve();
      await clock.sleep(10);
      steps.push(clock.now());
      await Promise.resolve();
      await clock.sleep(10);
      steps.push(clock.now());
    };
    const done = work();
    await clock.advance(20);
    expect(steps).toEqual([10, 20]);
    await done;
  });

  it('catches a timer scheduled after an event-loop hop when the hop happens between timers', async () => {
    const clock = fakeClock();
    const steps: number[] = [];
    // Like code awaiting a group-committed ledger write (flushed on the next event-loop turn).
    const commit = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const work = async (): Promise<void> => {
      await commit();
      await clock.sleep(10);
      await commit();
      steps.push(clock.now());
      await clock.sleep(10);
      steps.push(clock.now());
    };
    const done = work();
    await clock.advance(20);
    expect(steps).toEqual([10, 20]);
    await done;
  });

  it('does not fire a sleep before its time when advanced short of it', async () => {
    const clock = fakeClock();
    let woke = false;
    void clock.sleep(10).then(() => (woke = true));
    await clock.advance(9);
    expect(woke).toBe(false);
    await clock.advance(1);
    expect(woke).toBe(true);
  });

  it('rejects a sleep with the signal reason when the signal aborts', async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    controller.abort(new RuntimeError('cancelled', 'user sent /stop'));
    await expect(sleeping).rejects.toThrow('user sent /stop');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects a sleep with a cancelled error when the signal aborted without an Error reason', async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    controller.abort('no error object');
    const error: unknown = await clock.sleep(10, controller.signal).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'cancelled')).toBe(true);
  });

  it('does not fire a timer when it was cleared', async () => {
    const clock = fakeClock();
    const fired: string[] = [];
    const handle = clock.setTimeout(() => fired.push('cleared'), 10);
    clock.setTimeout(() => fired.push('kept'), 10);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.clearTimeout(12345);
    clock.clearTimeout(undefined);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(10);
    expect(fired).toEqual(['kept']);
  });

  it('keeps order when many timers are cleared and scheduled', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    const handles = [];
    for (let index = 0; index < 500; index++) {
      handles.push(clock.setTimeout(() => fired.push(index), 1_000 - index));
    }
    for (let index = 0; index < 500; index += 2) clock.clearTimeout(handles[index]);
    await clock.runAll();
    const expected = [...Array(500).keys()].filter((index) => index % 2 === 1).reverse();
    expect(fired).toEqual(expected);
  });

  it('fires every timer and stops at the last due time when runAll is called', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    const chain = async (): Promise<void> => {
      for (let step = 0; step < 3; step++) {
        await clock.sleep(100);
        fired.push(clock.now());
      }
    };
    const done = chain();
    await clock.runAll();
    await done;
    expect(fired).toEqual([100, 200, 300]);
    expect(clock.now()).toBe(300);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('throws an internal error when runAll meets timers that never stop', async () => {
    const clock = fakeClock();
    const again = (): void => {
      clock.setTimeout(again, 1);
    };
    again();
    const error: unknown = await clock.runAll({ maxTimers: 50 }).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'internal')).toBe(true);
  });

  it('rejects with invalid_input when advance gets a negative time', async () => {
    const error: unknown = await fakeClock()
      .advance(-1)
      .catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
  });

  it('runs two un-awaited advances one after the other when both are started at once', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 15);
    await Promise.all([clock.advance(10), clock.advance(10)]);
    expect(fired).toEqual([15]);
    expect(clock.now()).toBe(20);
  });

  it('drives an XState after transition when used as the actor clock', async () => {
    const clock = fakeClock();
    const machine = createMachine({
      initial: 'waiting',
      states: { waiting: { after: { 1000: 'done' } }, done: {} },
    });
    const actor = createActor(machine, { clock });
    actor.start();
    await clock.advance(999);
    expect(actor.getSnapshot().value).toBe('waiting');
    await clock.advance(1);
    expect(actor.getSnapshot().value).toBe('done');
    actor.stop();
  });
});

describe('fakeClock long delays', () => {
  it('fires a delay above 2^31 - 1 ms at its due time, not at once, when advanced', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 30 * 24 * 3_600_000);
    await clock.advance(2 ** 31);
    expect(fired).toEqual([]);
    await clock.advance(30 * 24 * 3_600_000 - 2 ** 31);
    expect(fired).toEqual([30 * 24 * 3_600_000]);
  });

  it('never fires a timer with an infinite delay when runAll is called', async () => {
    const clock = fakeClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('never'), Number.POSITIVE_INFINITY);
    clock.setTimeout(() => fired.push('soon'), 5);
    await clock.runAll();
    expect(fired).toEqual(['soon']);
    expect(clock.now()).toBe(5);
  });
});
