import { createDeferred, type Deferred } from '../../core/index.js';
import type { EventOf, RuntimeEvent } from '../../core/index.js';

type Delta = EventOf<'assistant.delta'>;

/**
 * How long a run's streamed text may wait in memory before it is written as one row. Subscribers see a delta
 * only once its row is durable (and every later event waits for it), so this is also the most that live token
 * streaming lags behind the model.
 */
export const coalesceMs = 50;
/** How much streamed text one row holds at most before it is written. */
export const coalesceChars = 4000;
/**
 * How far apart (in cursors) the first and last token of one row are at most. Rows of concurrent runs overlap
 * in cursor order; this bound lets a read find every row holding a token at or below a cursor (see delta-rows.ts).
 */
export const coalesceSpan = 256;

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
 * joined, the cursor and seq of the last token, and each token's marks, so reads can cut the row at any token: see
 * delta-rows.ts), written when another event of that run arrives, when it grew past `coalesceChars` or would span
 * `coalesceSpan` cursors, or once it is `coalesceMs` old (so a crash loses at most that much of a run's stream).
 */
export interface DeltaCoalescer {
  /** Split `events` into what to write now (buffered deltas of a run always before that run's next event). */
  take(events: readonly RuntimeEvent[]): CoalescedBatch;
  /** Every buffered delta, for reads and close. */
  drain(): CoalescedBatch;
}

/** A delta row as written: the joined text, the last token's envelope, and its tokens' marks (delta-rows.ts). */
type CoalescedDelta = Delta & { tokens?: number[] };

/** A run's deltas waiting in memory to be written as one row. */
export interface DeltaBuffer {
  readonly first: number;
  readonly firstCursor: number;
  event: Delta;
  /** Three numbers per token: its cursor's and seq's step from the previous token's, and its text length. */
  readonly tokens: number[];
  readonly written: Deferred<void>;
}

/** Open a buffer with its first delta. */
export function openDeltaBuffer(event: Delta): DeltaBuffer {
  const written = createDeferred<void>();
  // Whoever appended the delta awaits `written`; this keeps a failure nobody awaits from going unhandled.
  written.promise.catch(() => undefined);
  return {
    first: event.at,
    firstCursor: event.cursor,
    event,
    tokens: [event.cursor, event.seq, event.delta.length],
    written,
  };
}

/** Whether `event` may join `buffer`'s row without the row spanning `coalesceSpan` cursors or more. */
export function fitsSpan(buffer: DeltaBuffer, event: Delta): boolean {
  return event.cursor - buffer.firstCursor < coalesceSpan;
}

/** Add a later delta of the same run to `buffer`: its text joined, its envelope the row's, its marks kept. */
export function joinDelta(buffer: DeltaBuffer, event: Delta): void {
  buffer.tokens.push(event.cursor - buffer.event.cursor, event.seq - buffer.event.seq, event.delta.length);
  buffer.event = { ...event, delta: buffer.event.delta + event.delta };
}

/** The row to write for `buffer`: one delta as it came, several with their token marks. */
export function bufferedRow(buffer: DeltaBuffer): RuntimeEvent {
  if (buffer.tokens.length <= 3) return buffer.event;
  const row: CoalescedDelta = { ...buffer.event, tokens: buffer.tokens };
  return row;
}

/** Create a coalescer. */
export function createDeltaCoalescer(): DeltaCoalescer {
  const open = new Map<string, DeltaBuffer>();
  return {
    take(events) {
      const write: RuntimeEvent[] = [];
      const flushed: Deferred<void>[] = [];
      const waits = new Set<Promise<void>>();
      const flush = (runId: string, buffered: DeltaBuffer): void => {
        write.push(bufferedRow(buffered));
        flushed.push(buffered.written);
        open.delete(runId);
      };
      let latest = 0;
      for (const event of events) {
        latest = Math.max(latest, event.at);
        const runId = event.runId;
        if (event.type === 'assistant.delta' && runId !== undefined) {
          let buffered = open.get(runId);
          if (buffered !== undefined && !fitsSpan(buffered, event)) flush(runId, buffered);
          buffered = open.get(runId);
          if (buffered === undefined) open.set(runId, (buffered = openDeltaBuffer(event)));
          else joinDelta(buffered, event);
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
        write: buffers.map(bufferedRow),
        flushed: buffers.map((buffered) => buffered.written),
        waits: [],
      };
    },
  };
}
