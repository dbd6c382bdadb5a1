import { z } from 'zod';
import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import type { Ledger } from '../ledger/ledger.js';
import type { EventBus } from './event-bus.js';

const pageSize = 500;

/** Where an event stream starts and when it stops. */
export interface EventStreamOptions {
  /** Replay events with a cursor above this one. @default 0 (everything recorded) */
  readonly after?: number;
  /** Stops the stream. */
  readonly signal?: AbortSignal;
}

const streamOptionsSchema = z
  .object({
    after: z.int().min(0).optional(),
    signal: z.instanceof(AbortSignal).optional(),
    sessionKey: z.string().optional(),
  })
  .strict();

/**
 * Replay the recorded events after `after`, then follow live ones, with no gap and no repeat: the live
 * subscription starts before the replay and events are deduplicated by cursor. Ends when `signal` aborts or
 * `closed` resolves.
 */
export async function* streamEvents(
  source: { ledger: Ledger; bus: EventBus; closed: Promise<void> },
  options: EventStreamOptions & { sessionKey?: string },
): AsyncGenerator<RuntimeEvent, void, undefined> {
  // Checked before subscribing, so bad options change nothing (and leak no listener).
  const checked = streamOptionsSchema.safeParse(options);
  if (!checked.success) {
    throw new RuntimeError('invalid_input', `events: ${z.prettifyError(checked.error)}`, {
      cause: checked.error,
    });
  }
  const { ledger, bus } = source;
  const buffer: RuntimeEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const stop = (): void => {
    ended = true;
    wake?.();
  };
  const unsubscribe = bus.subscribe((event) => {
    buffer.push(event);
    wake?.();
  }, options.sessionKey);
  options.signal?.addEventListener('abort', stop, { once: true });
  void source.closed.then(stop);
  let last = options.after ?? 0;
  try {
    await bus.flushed();
    for (;;) {
      const page = await ledger.readEvents({
        after: last,
        limit: pageSize,
        ...(options.sessionKey === undefined ? {} : { sessionKey: options.sessionKey }),
      });
      for (const event of page) {
        if (event.cursor <= last) continue;
        last = event.cursor;
        yield event;
      }
      if (page.length < pageSize) break;
    }
    for (;;) {
      while (buffer.length > 0) {
        const event = buffer.shift() as RuntimeEvent;
        if (event.cursor <= last) continue;
        last = event.cursor;
        yield event;
      }
      if (ended || options.signal?.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener('abort', stop);
  }
}
