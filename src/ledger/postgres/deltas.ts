import type { Deferred } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import {
  bufferedRow,
  coalesceChars,
  coalesceMs,
  fitsSpan,
  joinDelta,
  openDeltaBuffer,
  type CoalescedBatch,
  type DeltaBuffer,
  type DeltaCoalescer,
} from '../sql/delta-coalescer.js';

/**
 * The Postgres ledger's delta coalescer: consecutive `assistant.delta` events of one run become one event (the
 * text joined, the cursor and seq of the last token, the tokens' marks), like the SQLite ledger's, except that ANY other event (a
 * delta of another run too) writes the buffer first. So rows go in cursor order, and the log's commit order is its
 * cursor order, which readers in other processes rely on (they cannot flush this process's buffer before reading).
 */
export function createOrderedDeltaCoalescer(): DeltaCoalescer {
  let open: DeltaBuffer | undefined;
  const drain = (): CoalescedBatch => {
    const buffered = open;
    open = undefined;
    return buffered === undefined
      ? { write: [], flushed: [], waits: [] }
      : { write: [bufferedRow(buffered)], flushed: [buffered.written], waits: [] };
  };
  return {
    take(events) {
      const write: RuntimeEvent[] = [];
      const flushed: Deferred<void>[] = [];
      const waits = new Set<Promise<void>>();
      const flush = (): void => {
        if (open === undefined) return;
        write.push(bufferedRow(open));
        flushed.push(open.written);
        open = undefined;
      };
      for (const event of events) {
        const joins =
          event.type === 'assistant.delta' &&
          event.runId !== undefined &&
          open?.event.runId === event.runId &&
          fitsSpan(open, event);
        if (joins && open !== undefined) {
          joinDelta(open, event);
        } else {
          flush();
          if (event.type !== 'assistant.delta' || event.runId === undefined) {
            write.push(event);
            continue;
          }
          open = openDeltaBuffer(event);
        }
        waits.add(open.written.promise);
        if (open.event.delta.length >= coalesceChars || event.at - open.first >= coalesceMs) flush();
      }
      return { write, flushed, waits: [...waits] };
    },
    drain,
  };
}
