import { createDeferred, type Deferred } from '../core/deferred.js';
import type { EventOf, RuntimeEvent } from '../core/events.js';

type Delta = EventOf<'assistant.delta'>;

/**
 * How long a run's streamed text may wait in memory before it is written as one row. Subscribers see a delta
 * only once its row is durable (and every later event waits for it), so this is also the most that live token
 * streaming lags behind the model.
 */
export const coalesceMs = 50;
/** How much streamed text one row holds at most before it is written. */
export const coalesceChars = 4000;

/** What to write now, and what waits in memory. */
export interface CoalescedBatch {
  /** The events to write now, in order. */
  readonly write: readonly RuntimeEvent[];
  /** The buffers among `write`: settle each with the outcome of writing `write`. */
  readonly flushed: readonly Deferred<void>[];
  /** One promise per buffer the given deltas went into: each settles once that buffer's row was written. */
  readonly waits: readonly Promise<void>[];
}

/**
 * Stores token deltas coalesced: consecutive `assistant.delta` events of one run become one event (the text
 * joined, the cursor and seq of the last token), written when another event of that run arrives, when it grew
 * past `coalesceChars`, or once it is `coalesceMs` old (so a crash loses at most that much of a run's stream).
 */
export interface DeltaCoalescer {
  /** Split `events` into what to write now (buffered deltas of a run always before that run's next event). */
  take(events: readonly RuntimeEvent[]): CoalescedBatch;
  /** Every buffered delta, for reads and close. */
  drain(): CoalescedBatch;
}

interface Buffer {
  readonly first: number;
  event: Delta;
  readonly written: Deferred<void>;
}

function openBuffer(event: Delta): Buffer {
  const written = createDeferred<void>();
  // Whoever appended the delta awaits `written`; this keeps a failure nobody awaits from going unhandled.
  written.promise.catch(() => undefined);
  return { first: event.at, event, written };
}

/** Create a coalescer. */
export function createDeltaCoalescer(): DeltaCoalescer {
  const open = new Map<string, Buffer>();
  return {
    take(events) {
      const write: RuntimeEvent[] = [];
      const flushed: Deferred<void>[] = [];
      const waits = new Set<Promise<void>>();
      const flush = (runId: string, buffered: Buffer): void => {
        write.push(buffered.event);
        flushed.push(buffered.written);
        open.delete(runId);
      };
      let latest = 0;
      for (const event of events) {
        latest = Math.max(latest, event.at);
        const runId = event.runId;
        if (event.type === 'assistant.delta' && runId !== undefined) {
          let buffered = open.get(runId);
          if (buffered === undefined) {
            open.set(runId, (buffered = openBuffer(event)));
          } else {
            buffered.event = { ...event, delta: buffered.event.delta + event.delta };
          }
          waits.add(buffered.written.promise);
          if (buffered.event.delta.length >= coalesceChars) flush(runId, buffered);
          continue;
        }
        const buffered = runId === undefined ? undefined : open.get(runId);
        if (runId !== undefined && buffered !== undefined) flush(runId, buffered);
        write.push(event);
      }
      for (const [runId, buffered] of open) {
        if (latest - buffered.first >= coalesceMs) flush(runId, buffered);
      }
      return { write, flushed, waits: [...waits] };
    },
    drain() {
      const buffers = [...open.values()];
      open.clear();
      return {
        write: buffers.map((buffered) => buffered.event),
        flushed: buffers.map((buffered) => buffered.written),
        waits: [],
      };
    },
  };
}
