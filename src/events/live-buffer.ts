import type { RuntimeEvent } from '../core/index.js';

/** How many live events one stream holds before it falls back to reading the ledger. */
export const liveBufferLimit = 1000;

/**
 * The live events a stream received and has not yielded yet, bounded: past `limit` it drops them all and says
 * it overflowed, and the stream pages the dropped stretch from the ledger instead (a stalled consumer costs
 * ledger reads, not memory).
 */
export interface LiveBuffer {
  /** Called by the bus for each delivered event. */
  push(event: RuntimeEvent): void;
  /** The oldest held event, removed. */
  take(): RuntimeEvent | undefined;
  /** True once an event was dropped since the last `reset`. */
  readonly overflowed: boolean;
  /** Forget every held event and the overflow (the caller reads them from the ledger). */
  reset(): void;
  /** How many events are held now. */
  readonly size: number;
  /** Resolves at the next push (or `wakeUp`). */
  next(): Promise<void>;
  /** Resolve a pending `next` (the stream is ending). */
  wakeUp(): void;
}

/** Create a bounded buffer; `onSize` observes the held count after each push (tests and metrics). */
export function createLiveBuffer(limit = liveBufferLimit, onSize?: (size: number) => void): LiveBuffer {
  let held: RuntimeEvent[] = [];
  let head = 0;
  let overflowed = false;
  let wake: (() => void) | undefined;
  const wakeUp = (): void => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  return {
    push(event) {
      if (overflowed) return;
      if (held.length - head >= limit) {
        overflowed = true;
        held = [];
        head = 0;
      } else {
        held.push(event);
      }
      onSize?.(held.length - head);
      wakeUp();
    },
    take() {
      if (head >= held.length) return undefined;
      const event = held[head++] as RuntimeEvent;
      if (head === held.length) {
        held = [];
        head = 0;
      }
      return event;
    },
    get overflowed() {
      return overflowed;
    },
    reset() {
      held = [];
      head = 0;
      overflowed = false;
    },
    get size() {
      return held.length - head;
    },
    next() {
      return new Promise<void>((resolve) => (wake = resolve));
    },
    wakeUp,
  };
}
