import type { FakeClock, RunAllOptions } from 'agentlanes/testing';
import { sleepOn } from '../../src/core/clock.js';
import { RuntimeError } from '../../src/core/errors.js';

/** The same default cap as the fake clock's own `runAll`. */
const defaultMaxTimers = 100_000;

/**
 * `clock` stepped from one due time to the next, awaiting `settled` before each step and after the last: a timer
 * fires only once the work the previous one started is done, however many round trips that work takes. The fake
 * clock alone settles with a few event-loop turns, enough for an in-process ledger but not for one over a socket,
 * whose late write would otherwise schedule its next timer after `advance` has already moved time past it.
 */
export function settlingClock(clock: FakeClock, settled: () => Promise<void>): FakeClock {
  const dues = new Map<unknown, number>();
  let fired = 0;
  let queue: Promise<void> = Promise.resolve();

  const setTimer = (callback: () => void, ms: number): unknown => {
    const delay = Number.isNaN(ms) || ms < 0 ? 0 : ms;
    const handle = clock.setTimeout(() => {
      dues.delete(handle);
      fired++;
      callback();
    }, delay);
    dues.set(handle, clock.now() + delay);
    return handle;
  };
  const clearTimer = (handle: unknown): void => {
    dues.delete(handle);
    clock.clearTimeout(handle);
  };
  const nextDue = (): number | undefined => {
    let earliest: number | undefined;
    for (const due of dues.values()) if (earliest === undefined || due < earliest) earliest = due;
    return earliest;
  };
  /** Fire the timers due up to `until` (every finite one when undefined), one due time per step. */
  const step = async (until: number | undefined, maxTimers: number): Promise<void> => {
    const start = fired;
    for (;;) {
      await settled();
      const due = nextDue();
      if (due === undefined || due === Number.POSITIVE_INFINITY) return;
      if (until !== undefined && due > until) return;
      if (fired - start >= maxTimers) {
        throw new RuntimeError('internal', `fakeClock.runAll: more than ${maxTimers} timers fired`);
      }
      await clock.advance(Math.max(0, due - clock.now()));
    }
  };
  // Calls run one after another, as on the fake clock, so two un-awaited `advance` calls do not interleave.
  const serialize = (work: () => Promise<void>): Promise<void> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };

  return {
    now: () => clock.now(),
    setTimeout: setTimer,
    clearTimeout: clearTimer,
    sleep: sleepOn({ setTimeout: setTimer, clearTimeout: clearTimer }),
    advance: (ms) => {
      if (!Number.isFinite(ms) || ms < 0) return clock.advance(ms);
      return serialize(async () => {
        const until = clock.now() + ms;
        await step(until, Number.POSITIVE_INFINITY);
        await clock.advance(Math.max(0, until - clock.now()));
        await settled();
      });
    },
    runAll: (options: RunAllOptions = {}) =>
      serialize(() => step(undefined, options.maxTimers ?? defaultMaxTimers)),
    pendingTimers: () => clock.pendingTimers(),
  };
}
