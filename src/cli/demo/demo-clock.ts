import { sleepOn, type Clock } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';

/** The demo's simulated clock: time moves only when the demo advances it. */
export interface DemoClock extends Clock {
  /** Move time forward by `ms`, firing due timers one at a time, each once the work before it has settled. */
  advance(ms: number): Promise<void>;
}

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

function earlier(a: Timer, b: Timer): boolean {
  return a.due < b.due || (a.due === b.due && a.id < b.id);
}

/**
 * A simulated clock whose every timer fires only once `settled()` resolved, so the work the previous timer started
 * (ledger writes, whatever awaits them, the writes they lead to) is done first, however long the host takes to do
 * it. The test fake clock instead lets a fixed few event-loop turns pass between timers: whether a chain of writes
 * finished within them depended on how fast the machine committed (the SQLite group commit cuts its batches by
 * host time), so one seed could play a run a token earlier or later.
 */
export function createDemoClock(settled: () => Promise<void>): DemoClock {
  let current = 0;
  let nextId = 1;
  const timers = new Map<number, Timer>();
  let queue: Promise<void> = Promise.resolve();

  const setTimer = (callback: () => void, ms: number): number => {
    const delay = Number.isNaN(ms) || ms < 0 ? 0 : ms;
    const timer: Timer = { id: nextId++, due: current + delay, callback };
    timers.set(timer.id, timer);
    return timer.id;
  };
  const clearTimer = (handle: unknown): void => {
    if (typeof handle === 'number') timers.delete(handle);
  };
  const nextTimer = (): Timer | undefined => {
    let first: Timer | undefined;
    for (const timer of timers.values()) if (first === undefined || earlier(timer, first)) first = timer;
    return first;
  };
  const fireDue = async (until: number): Promise<void> => {
    await settled();
    for (let timer = nextTimer(); timer !== undefined && timer.due <= until; timer = nextTimer()) {
      timers.delete(timer.id);
      current = Math.max(current, timer.due);
      timer.callback();
      await settled();
    }
    current = Math.max(current, until);
  };

  return {
    now: () => current,
    setTimeout: setTimer,
    clearTimeout: clearTimer,
    sleep: sleepOn({ setTimeout: setTimer, clearTimeout: clearTimer }),
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) {
        return Promise.reject(new RuntimeError('invalid_input', `advance needs ms >= 0, got ${ms}`));
      }
      // One advance at a time, so two calls never interleave their timers.
      const run = queue.then(() => fireDue(current + ms));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
