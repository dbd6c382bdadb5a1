import { RuntimeError } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { EventBus } from './event-bus.js';
import { checkStreamOptions, type CheckedStreamOptions } from './event-stream-options.js';
import { runtimeStreamsOf } from './runtime-streams.js';

/** What the start check reads: the bus's last cursor, else the ledger's. */
interface StartSource {
  readonly ledger: Ledger;
  readonly bus: EventBus;
  readonly closed: Promise<void>;
}

/**
 * Refuse an `after` cursor past the end of the log (no event would ever reach it, so its stream would stay silent
 * forever) with `invalid_input`. The bus's last cursor answers at once, with no await (the common case costs the
 * stream nothing); a cursor beyond it is checked against the ledger, since a cluster worker's events reach this
 * bus a poll later.
 */
export async function refusePastEnd(source: StartSource, after: number): Promise<void> {
  if (after <= source.bus.cursor) return;
  const last = await source.ledger.lastCursor();
  if (after <= Math.max(last, source.bus.cursor)) return;
  throw new RuntimeError('invalid_input', `events: cursor ${after} is past the end of the log (${last})`, {
    details: { after, last },
  });
}

/**
 * Check where a stream starts, at once (before its first step): `invalid_input` for bad options, and for an
 * `after` past the end of the log. Nothing is checked once the runtime closed.
 */
async function checkStart(source: StartSource, rawOptions: CheckedStreamOptions): Promise<void> {
  const { after } = checkStreamOptions(rawOptions);
  if (typeof after !== 'number') return;
  if (await runtimeStreamsOf(source.closed).readyOrClosed(source.bus.ready))
    await refusePastEnd(source, after);
}

/** Each stream's start check, by stream: see `eventStreamStarted`. */
const starts = new WeakMap<object, Promise<void>>();

/**
 * Check `stream`'s start beside it (the stream itself is not wrapped: a delegating generator would add microtask
 * hops to every event) and remember the check. The copy kept never goes unhandled: the stream's own first step
 * reports the same refusal.
 */
export function keepStart(stream: object, source: StartSource, rawOptions: CheckedStreamOptions): void {
  const kept = checkStart(source, rawOptions);
  kept.catch(() => undefined);
  starts.set(stream, kept);
}

/**
 * Resolves once the start of a stream from `runtime.events()` or `session.events()` was checked; rejects with what
 * its first step would throw (`invalid_input` for bad options or a cursor past the end of the log). Lets a caller
 * refuse a bad start before it answers (the SSE route's 400) without iterating: a stream never iterated holds
 * nothing.
 */
export function eventStreamStarted(stream: AsyncIterable<RuntimeEvent>): Promise<void> {
  return starts.get(stream) ?? Promise.resolve();
}
