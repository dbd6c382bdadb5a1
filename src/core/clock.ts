import { RuntimeError } from './errors.js';

/** The longest duration any option or argument takes (one year): every `*Ms` schema is bounded by it. */
export const maxDurationMs = 365 * 24 * 3_600_000;

/** An opaque timer handle returned by `Clock.setTimeout`. */
export type TimerHandle = unknown;

/**
 * Time as the runtime sees it. Everything that waits or stamps takes one, so tests can use the fake clock.
 * The shape fits XState's `createActor(machine, { clock })`.
 */
export interface Clock {
  /** Milliseconds since the epoch (or since the fake clock's start). */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `ms`; rejects with the signal's reason (a `cancelled` RuntimeError by default) on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The reason to reject with when `signal` aborted: its own reason if it is an Error, else `cancelled`. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new RuntimeError('cancelled', 'aborted');
}

/** Build `sleep` on top of a clock's own `setTimeout` / `clearTimeout`. */
export function sleepOn(clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>) {
  return (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const onAbort = (): void => {
        clock.clearTimeout(handle);
        reject(abortReason(signal as AbortSignal));
      };
      const handle = clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
}

/**
 * The longest delay a host timer takes: Node clamps anything above 2^31 − 1 ms to 1 ms (it would fire at once),
 * so longer waits are chained from timers of at most this length.
 */
export const maxHostTimerMs = 2 ** 31 - 1;

/** The host capabilities the system clock is built on; injectable so its chaining can be tested without waits. */
export interface HostTimers {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of `createSystemClock`. */
export interface SystemClockOptions {
  /**
   * The host's time and timers.
   * @default Date.now and the global setTimeout / clearTimeout
   */
  readonly host?: HostTimers;
  /**
   * The longest single host timer; longer delays are chained.
   * @default 2 ** 31 - 1
   */
  readonly maxTimerMs?: number;
}

interface ChainedTimer {
  current: unknown;
  cleared: boolean;
}

const nodeTimers: HostTimers = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A real clock whose timers take any delay: a delay longer than the host allows is a chain of shorter timers,
 * each re-measuring what is left, so it fires at its due time. A negative or NaN delay counts as 0; an infinite
 * one never fires.
 */
export function createSystemClock(options: SystemClockOptions = {}): Clock {
  const host = options.host ?? nodeTimers;
  const maxTimerMs = Math.max(1, Math.min(options.maxTimerMs ?? maxHostTimerMs, maxHostTimerMs));
  const setChained = (callback: () => void, ms: number): ChainedTimer => {
    const delay = Number.isNaN(ms) || ms < 0 ? 0 : ms;
    const due = host.now() + delay;
    const timer: ChainedTimer = { current: undefined, cleared: false };
    const arm = (): void => {
      if (timer.cleared) return;
      const left = due - host.now();
      if (left <= 0 && delay !== Number.POSITIVE_INFINITY) {
        callback();
        return;
      }
      timer.current = host.setTimeout(arm, Math.min(Math.max(left, 0), maxTimerMs));
    };
    if (delay <= maxTimerMs) timer.current = host.setTimeout(callback, delay);
    else arm();
    return timer;
  };
  const clearChained = (handle: unknown): void => {
    if (typeof handle !== 'object' || handle === null || !('cleared' in handle)) return;
    const timer = handle as ChainedTimer;
    timer.cleared = true;
    host.clearTimeout(timer.current);
  };
  return {
    now: () => host.now(),
    setTimeout: setChained,
    clearTimeout: clearChained,
    sleep: sleepOn({ setTimeout: setChained, clearTimeout: clearChained }),
  };
}

/** The real clock: `Date.now` and the host's timers, chained for delays beyond what the host takes. */
export const systemClock: Clock = createSystemClock();
