import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import { checkStreamOptions, type CheckedStreamOptions } from './event-stream-options.js';
import type { EventSource } from './event-stream.js';

/**
 * Check where a stream starts, at once (before its first step): `invalid_input` for bad options, and for an `after`
 * cursor past the end of the log (no event would ever reach it, so its stream would stay silent forever). The bus's
 * last cursor answers at once; a cursor beyond it is checked against the ledger (a cluster worker's events reach
 * this bus a poll later). Nothing is checked once the runtime closed.
 */
export async function checkStart(source: EventSource, rawOptions: CheckedStreamOptions): Promise<void> {
  const { after } = checkStreamOptions(rawOptions);
  if (typeof after !== 'number') return;
  const ready = await Promise.race([source.bus.ready.then(() => true), source.closed.then(() => false)]);
  if (!ready || after <= source.bus.cursor) return;
  const last = await source.ledger.lastCursor();
  if (after <= Math.max(last, source.bus.cursor)) return;
  throw new RuntimeError('invalid_input', `events: cursor ${after} is past the end of the log (${last})`, {
    details: { after, last },
  });
}

/** Each stream's start check, by stream: see `eventStreamStarted`. */
const starts = new WeakMap<object, Promise<void>>();

/** Remember `stream`'s start check; the copy kept never goes unhandled (the stream's first step reports it). */
export function keepStart(stream: object, started: Promise<void>): void {
  const kept = started.then(() => undefined);
  kept.catch(() => undefined);
  starts.set(stream, kept);
}

/**
 * Resolves once the start of a stream from `streamEvents` was checked; rejects with what its first step throws
 * (`invalid_input` for bad options or a cursor past the end of the log). Lets a caller refuse a bad start before it
 * answers (the SSE route's 400) without iterating: a stream never iterated holds nothing.
 */
export function eventStreamStarted(stream: AsyncIterable<RuntimeEvent>): Promise<void> {
  return starts.get(stream) ?? Promise.resolve();
}
