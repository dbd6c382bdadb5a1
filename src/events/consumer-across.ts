import { RuntimeError } from '../core/index.js';
import type { CheckedStreamOptions } from './event-stream-options.js';

/** A durable consumer this worker reads, until it gives it back or its lease is lost. */
export interface ConsumerHold {
  /** Resolves once the hold is lost (this worker's lease ran out): another worker may read the consumer now. */
  readonly lost: Promise<void>;
  /** False once the hold is lost; a lease this worker no longer trusts is renewed first (a stall is found here). */
  confirm(): Promise<boolean>;
  /** Give the consumer back and ring the standbys; never rejects. */
  release(): Promise<void>;
}

/**
 * Hold a durable consumer across processes (a cluster worker's), waiting while another process reads it;
 * undefined once `signal` aborted or the runtime closed first.
 */
export type ClaimAcross = (
  consumer: string,
  sessionKey: string | undefined,
  signal?: AbortSignal,
) => Promise<ConsumerHold | undefined>;

/** The consumer's name held across processes (see `EventSource.claimAcross`), while the stream reads it. */
export interface Across {
  /** Hold the name, waiting while another process reads it: false when the stream ended first. */
  take(): Promise<boolean>;
  /** True once another process may read the consumer: the stream ends with `fenced` and stores nothing more. */
  lost(): boolean;
  /** Before each event: throws `fenced` once the hold is lost; undefined (no wait) without a hold. */
  check(): Promise<void> | undefined;
  /** Throws `fenced` once the hold is lost (the stream was woken to end). */
  throwIfLost(): void;
  /** Give the name back across processes (before the process's own claim, so no stream here races it). */
  release(): Promise<void>;
}

/**
 * Hold the stream's consumer across processes with `claimAcross` (none: nothing to hold); `stop` ends the stream
 * once the hold is lost. `ending` aborts once the stream must end (its signal, or its runtime's close began): a
 * standby waiting for the name stops waiting then, or its runtime's close would wait for it until its timeout.
 */
export function createAcross(
  claimAcross: ClaimAcross | undefined,
  options: CheckedStreamOptions,
  stop: () => void,
  ending: AbortSignal,
): Across {
  let hold: ConsumerHold | undefined;
  let lost = false;
  const fenced = (): RuntimeError =>
    new RuntimeError('fenced', `consumer "${options.consumer}" was taken over by another worker`, {
      details: { consumer: options.consumer },
    });
  const confirm = async (current: ConsumerHold): Promise<void> => {
    if (!lost && !(await current.confirm())) lost = true;
    if (lost) throw fenced();
  };
  return {
    async take() {
      const { consumer, sessionKey } = options;
      if (consumer === undefined || claimAcross === undefined) return true;
      if (ending.aborted) return false;
      hold = await claimAcross(consumer, sessionKey, ending);
      if (hold === undefined) return false;
      void hold.lost.then(() => {
        lost = true;
        stop();
      });
      return true;
    },
    lost: () => lost,
    throwIfLost() {
      if (lost) throw fenced();
    },
    check: () => (hold === undefined ? undefined : confirm(hold)),
    release: () => hold?.release() ?? Promise.resolve(),
  };
}
