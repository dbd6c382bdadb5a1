import { abortReason } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';

/** At most `limit` task starts per `intervalMs`. */
export interface LaneRate {
  limit: number;
  intervalMs: number;
}

/**
 * A start-rate limit on the injected clock: at most `limit` starts in any window of `intervalMs` (a sliding
 * window over the last `limit` start times). Waiters are served in arrival order.
 */
export interface RateGate {
  /** Take a start now when one is free and nobody waits before us; false (and nothing taken) otherwise. */
  tryTake(): boolean;
  /** Wait for a start, in arrival order; rejects with the signal's reason (and gives up its place) on abort. */
  take(signal?: AbortSignal): Promise<void>;
  /** How many callers wait for a start. */
  readonly waiting: number;
}

interface Waiter {
  readonly resolve: () => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/** A gate's state: the last `limit` start times (a ring once full), its waiters and its one armed timer. */
interface GateState {
  readonly limit: number;
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly starts: number[];
  /** Index of the earliest recorded start once the ring is full. */
  oldest: number;
  readonly waiters: Waiter[];
  timer: TimerHandle;
}

/** When the next start is allowed; a clock that went back makes the recorded starts count as now. */
function freeAt(state: GateState, now: number): number {
  const { starts, limit } = state;
  if (starts.length < limit) return now;
  const newest = starts[(state.oldest + limit - 1) % limit] as number;
  if (newest > now) {
    for (let index = 0; index < limit; index++) starts[index] = Math.min(starts[index] as number, now);
  }
  return (starts[state.oldest] as number) + state.intervalMs;
}

function record(state: GateState, now: number): void {
  if (state.starts.length < state.limit) {
    state.starts.push(now);
    return;
  }
  state.starts[state.oldest] = now;
  state.oldest = (state.oldest + 1) % state.limit;
}

function disarm(state: GateState): void {
  if (state.timer === undefined) return;
  state.clock.clearTimeout(state.timer);
  state.timer = undefined;
}

/** Hand free starts to waiters in order, then arm one timer for the next free start if some still wait. */
function grant(state: GateState): void {
  const { clock, waiters } = state;
  const now = clock.now();
  while (waiters.length > 0 && freeAt(state, now) <= now) {
    const waiter = waiters.shift() as Waiter;
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    record(state, now);
    waiter.resolve();
  }
  if (waiters.length === 0 || state.timer !== undefined) return;
  state.timer = clock.setTimeout(
    () => {
      state.timer = undefined;
      grant(state);
    },
    freeAt(state, now) - now,
  );
}

/** Queue a waiter behind the others; its abort removes it (and the timer when nobody is left) and rejects. */
function wait(state: GateState, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const waiter: Waiter = {
      resolve,
      signal,
      onAbort: () => {
        state.waiters.splice(state.waiters.indexOf(waiter), 1);
        if (state.waiters.length === 0) disarm(state);
        reject(abortReason(signal as AbortSignal));
      },
    };
    signal?.addEventListener('abort', waiter.onAbort, { once: true });
    state.waiters.push(waiter);
    grant(state);
  });
}

/** Create a rate gate for `rate` whose waits run on `clock` (so a fake clock drives them). */
export function createRateGate(rate: LaneRate, clock: Clock): RateGate {
  const state: GateState = {
    limit: rate.limit,
    intervalMs: rate.intervalMs,
    clock,
    starts: [],
    oldest: 0,
    waiters: [],
    timer: undefined,
  };
  return {
    tryTake(): boolean {
      if (state.waiters.length > 0) return false;
      const now = clock.now();
      if (freeAt(state, now) > now) return false;
      record(state, now);
      return true;
    },
    take: (signal?: AbortSignal) => wait(state, signal),
    get waiting(): number {
      return state.waiters.length;
    },
  };
}
