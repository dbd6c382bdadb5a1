import type { Clock, TimerHandle } from '../core/index.js';
import { createDeferred, type Deferred } from '../core/index.js';

/** One open event stream as its runtime's close reaches it. */
export interface ClosingStream {
  /** Close began: a durable consumer's stream yields nothing more and ends at its next step. */
  readonly closing: () => void;
  /** The runtime closed: the stream ends once what was emitted before the close is delivered. */
  readonly closed: () => void;
}

/** What a stream holds of its runtime's registry while it is open. */
export interface StreamTicket {
  /** True once close began and the stream is a durable consumer's: it must yield nothing more. */
  readonly halted: () => boolean;
  /** The stream ended (its last position stored or refused): forget it. */
  readonly done: () => void;
}

/**
 * The event streams a runtime has open: what `close()` stops and waits for. Each stream is held only while it is
 * open (a stream that ended leaves nothing behind: a server follows streams for weeks), and the runtime-long
 * `closed` promise holds one reaction for all of them.
 */
export interface RuntimeStreams {
  /** Track a stream until `done`; `consumer` streams stop at the start of close, and close waits for them. */
  track(stream: ClosingStream, consumer: boolean): StreamTicket;
  /** Close began: every durable consumer's stream stops yielding (now and when opened later). */
  beginClose(): void;
  /**
   * Resolves once every durable consumer's stream open now ended (the event its loop was handling finished and
   * its position was stored), or after `timeoutMs` on `clock`.
   */
  settled(clock: Clock, timeoutMs: number): Promise<void>;
  /**
   * Resolves true once `ready` resolved, false once the runtime closed first. Streams wait so at their start: a
   * `Promise.race` with the runtime-long `closed` promise would hang a reaction on it per stream, kept (with what
   * it reaches) until the runtime closes.
   */
  readyOrClosed(ready: Promise<void>): Promise<boolean>;
  /** Streams open now. */
  readonly size: number;
}

interface Tracked {
  readonly stream: ClosingStream;
  readonly consumer: boolean;
  readonly ended: Deferred<void>;
}

/** Create the registry of the runtime whose close resolves `closed`. */
function createRuntimeStreams(closed: Promise<void>): RuntimeStreams {
  const open = new Set<Tracked>();
  const waiting = new Set<Deferred<boolean>>();
  let closing = false;
  let isClosed = false;
  void closed.then(() => {
    isClosed = true;
    for (const tracked of [...open]) tracked.stream.closed();
    for (const waiter of waiting) waiter.resolve(false);
    waiting.clear();
  });
  return {
    readyOrClosed(ready) {
      if (isClosed) return Promise.resolve(false);
      const waiter = createDeferred<boolean>();
      waiting.add(waiter);
      void ready.then(() => {
        waiting.delete(waiter);
        waiter.resolve(true);
      });
      return waiter.promise;
    },
    track(stream, consumer) {
      const tracked: Tracked = { stream, consumer, ended: createDeferred<void>() };
      open.add(tracked);
      if (consumer && closing) stream.closing();
      if (isClosed) stream.closed();
      return {
        halted: () => consumer && closing,
        done: () => {
          open.delete(tracked);
          tracked.ended.resolve();
        },
      };
    },
    beginClose() {
      if (closing) return;
      closing = true;
      for (const tracked of [...open]) if (tracked.consumer) tracked.stream.closing();
    },
    async settled(clock, timeoutMs) {
      const ending = [...open].filter((tracked) => tracked.consumer).map((tracked) => tracked.ended.promise);
      if (ending.length === 0) return;
      let timer: { readonly handle: TimerHandle } | undefined;
      const deadline = new Promise<void>(
        (resolve) => (timer = { handle: clock.setTimeout(resolve, timeoutMs) }),
      );
      await Promise.race([Promise.all(ending), deadline]);
      if (timer !== undefined) clock.clearTimeout(timer.handle);
    },
    get size() {
      return open.size;
    },
  };
}

const registries = new WeakMap<Promise<void>, RuntimeStreams>();

/**
 * The streams of the runtime whose close resolves `closed` (every stream of one runtime is given the same promise,
 * so it names the runtime without a handle of its own).
 */
export function runtimeStreamsOf(closed: Promise<void>): RuntimeStreams {
  let streams = registries.get(closed);
  if (streams === undefined) registries.set(closed, (streams = createRuntimeStreams(closed)));
  return streams;
}
