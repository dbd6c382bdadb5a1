import type { EventOf, RuntimeEvent } from '../core/events.js';

type Delta = EventOf<'assistant.delta'>;

/** How long a run's streamed text may wait in memory before it is written as one row. */
export const coalesceMs = 250;
/** How much streamed text one row holds at most before it is written. */
export const coalesceChars = 4000;

/**
 * Stores token deltas coalesced: consecutive `assistant.delta` events of one run become one event (the text
 * joined, the cursor and seq of the last token), written when another event of that run arrives, when it grew
 * past `coalesceChars`, or once it is `coalesceMs` old (so a crash loses at most that much of a run's stream).
 */
export interface DeltaCoalescer {
  /** Split `events` into what to write now (buffered deltas of a run always before that run's next event). */
  take(events: readonly RuntimeEvent[]): RuntimeEvent[];
  /** Every buffered delta, for reads and close. */
  drain(): RuntimeEvent[];
}

/** Create a coalescer. */
export function createDeltaCoalescer(): DeltaCoalescer {
  const open = new Map<string, { first: number; event: Delta }>();
  return {
    take(events) {
      const out: RuntimeEvent[] = [];
      let latest = 0;
      for (const event of events) {
        latest = Math.max(latest, event.at);
        const runId = event.runId;
        if (event.type === 'assistant.delta' && runId !== undefined) {
          const buffered = open.get(runId);
          if (buffered === undefined) {
            open.set(runId, { first: event.at, event });
          } else {
            buffered.event = { ...event, delta: buffered.event.delta + event.delta };
            if (buffered.event.delta.length >= coalesceChars) {
              out.push(buffered.event);
              open.delete(runId);
            }
          }
          continue;
        }
        if (runId !== undefined) {
          const buffered = open.get(runId);
          if (buffered !== undefined) {
            out.push(buffered.event);
            open.delete(runId);
          }
        }
        out.push(event);
      }
      for (const [runId, buffered] of open) {
        if (latest - buffered.first >= coalesceMs) {
          out.push(buffered.event);
          open.delete(runId);
        }
      }
      return out;
    },
    drain() {
      const out = [...open.values()].map((buffered) => buffered.event);
      open.clear();
      return out;
    },
  };
}
