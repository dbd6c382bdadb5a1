import { createDeferred, type Deferred } from '../core/deferred.js';
import type { EventOf, RuntimeEvent } from '../core/events.js';
import { coalesceChars, coalesceMs, type CoalescedBatch, type DeltaCoalescer } from './delta-coalescer.js';

type Delta = EventOf<'assistant.delta'>;

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

/**
 * The Postgres ledger's delta coalescer: consecutive `assistant.delta` events of one run become one event (the
 * text joined, the cursor and seq of the last token), like the SQLite ledger's, except that ANY other event (a
 * delta of another run too) writes the buffer first. So rows go in cursor order, and the log's commit order is its
 * cursor order, which readers in other processes rely on (they cannot flush this process's buffer before reading).
 */
export function createOrderedDeltaCoalescer(): DeltaCoalescer {
  let open: Buffer | undefined;
  const drain = (): CoalescedBatch => {
    const buffered = open;
    open = undefined;
    return buffered === undefined
      ? { write: [], flushed: [], waits: [] }
      : { write: [buffered.event], flushed: [buffered.written], waits: [] };
  };
  return {
    take(events) {
      const write: RuntimeEvent[] = [];
      const flushed: Deferred<void>[] = [];
      const waits = new Set<Promise<void>>();
      const flush = (): void => {
        if (open === undefined) return;
        write.push(open.event);
        flushed.push(open.written);
        open = undefined;
      };
      for (const event of events) {
        const joins =
          event.type === 'assistant.delta' && event.runId !== undefined && open?.event.runId === event.runId;
        if (joins && open !== undefined) {
          open.event = { ...event, delta: open.event.delta + event.delta };
        } else {
          flush();
          if (event.type !== 'assistant.delta' || event.runId === undefined) {
            write.push(event);
            continue;
          }
          open = openBuffer(event);
        }
        waits.add(open.written.promise);
        if (open.event.delta.length >= coalesceChars || event.at - open.first >= coalesceMs) flush();
      }
      return { write, flushed, waits: [...waits] };
    },
    drain,
  };
}
