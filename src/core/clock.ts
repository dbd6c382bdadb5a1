import { RuntimeError } from './errors.js';

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

/** The real clock: `Date.now` and the host's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  sleep: sleepOn({
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  }),
};
