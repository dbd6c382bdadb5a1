import { sleepOn, type Clock } from '../../core/clock.js';

/**
 * Macrotask turns to yield after each timer: enough for a SQLite group commit (flushed on the next event-loop
 * turn) and the code awaiting it to run before the next timer fires, so every run of the demo interleaves alike.
 */
const settleRounds = 3;

/** The demo's clock: virtual time that moves only when `advance` is called, so a seed replays exactly. */
export interface SimulatedClock extends Clock {
  /** Move time forward by `ms`, firing due timers in time order (ties in scheduling order). */
  advance(ms: number): Promise<void>;
}

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

async function settle(): Promise<void> {
  for (let round = 0; round < settleRounds; round++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Create a simulated clock starting at `now`. */
export function createSimulatedClock(now = 0): SimulatedClock {
  let current = now;
  let nextId = 1;
  const timers = new Map<number, Timer>();

  const setTimer = (callback: () => void, ms: number): number => {
    const delay = Number.isNaN(ms) || ms < 0 ? 0 : ms;
    const timer: Timer = { id: nextId++, due: current + delay, callback };
    timers.set(timer.id, timer);
    return timer.id;
  };
  const clearTimer = (handle: unknown): void => {
    if (typeof handle === 'number') timers.delete(handle);
  };
  /** The earliest timer due at or before `until`. */
  const nextDue = (until: number): Timer | undefined => {
    let earliest: Timer | undefined;
    for (const timer of timers.values()) {
      if (timer.due > until) continue;
      if (earliest === undefined || timer.due < earliest.due) earliest = timer;
    }
    return earliest;
  };

  return {
    now: () => current,
    setTimeout: setTimer,
    clearTimeout: clearTimer,
    sleep: sleepOn({ setTimeout: setTimer, clearTimeout: clearTimer }),
    async advance(ms) {
      const until = current + ms;
      await settle();
      for (let timer = nextDue(until); timer !== undefined; timer = nextDue(until)) {
        timers.delete(timer.id);
        current = Math.max(current, timer.due);
        timer.callback();
        await settle();
      }
      current = until;
    },
  };
}
