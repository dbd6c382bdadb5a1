import type { Clock } from '../core/index.js';
import { RuntimeError, isRuntimeError } from '../core/index.js';
import type { EventType, RuntimeEvent } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { EventBus } from './event-bus.js';
import { createAcross, type Across, type ClaimAcross } from './consumer-across.js';
import { checkStreamOptions, type CheckedStreamOptions } from './event-stream-options.js';
import { keepStart, refusePastEnd } from './event-stream-start.js';
import { createLiveBuffer, liveBufferLimit, type LiveBuffer } from './live-buffer.js';
import { runtimeStreamsOf, type StreamTicket } from './runtime-streams.js';

export type { EventStreamOptions } from './event-stream-options.js';

const pageSize = 500;

/** What a stream reads from. `bufferLimit` and `onBufferSize` exist for tests. */
export interface EventSource {
  readonly ledger: Ledger;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly closed: Promise<void>;
  readonly onError: (error: unknown) => void;
  readonly bufferLimit?: number;
  readonly onBufferSize?: (size: number) => void;
  /**
   * Hold a durable consumer across processes (a cluster worker's), waiting while another process reads it;
   * undefined once `signal` aborted or the runtime closed first. Absent on one process: the bus's claim suffices.
   */
  readonly claimAcross?: ClaimAcross;
}

/** Where a stream stands: the last cursor it passed, and what it still may yield. */
interface Position {
  last: number;
  readonly accepts: (event: RuntimeEvent) => boolean;
  readonly sessionKey: string | undefined;
}

/**
 * Read the recorded events after `position.last` up to `until` (a page at most); events beyond `until` are left
 * out: the ledger may hold writes not delivered yet (held, or behind an earlier write), and those come live. A
 * coalesced delta row is cut at both ends (the ledger hands out only its tokens in range). Returns undefined once
 * the stretch is read.
 */
async function readStretch(
  ledger: Ledger,
  position: Position,
  until: number,
): Promise<RuntimeEvent[] | undefined> {
  if (position.last >= until) return undefined;
  const page = await ledger.readEvents({
    after: position.last,
    until,
    limit: pageSize,
    ...(position.sessionKey === undefined ? {} : { sessionKey: position.sessionKey }),
  });
  const kept = page.filter((event) => event.cursor > position.last && event.cursor <= until);
  // A short page read every row up to `until`. Events of the page are passed even when filtered out, so the
  // next page starts after them.
  const reachedEnd = page.length < pageSize || kept.length < page.length;
  position.last = reachedEnd ? until : Math.max(position.last, (page.at(-1) as RuntimeEvent).cursor);
  return kept.filter(position.accepts);
}

/** Where a stream starts: a consumer's stored position, else `after` (`'now'`: the end of the log). */
async function startCursor(source: EventSource, options: CheckedStreamOptions): Promise<number> {
  if (options.consumer !== undefined) {
    const stored = await source.ledger.getConsumer(options.consumer, options.sessionKey);
    if (stored !== undefined) return stored.cursor;
  }
  if (options.after === 'now') return source.bus.delivered;
  const after = options.after ?? 0;
  if (after > source.bus.cursor) await refusePastEnd(source, after);
  return after;
}

/** Where a stream starts (see `startCursor`), and which events it yields. */
async function startPosition(source: EventSource, stream: OpenStream): Promise<Position> {
  const { options } = stream;
  return {
    last: await startCursor(source, options),
    accepts: stream.accepts,
    sessionKey: options.sessionKey,
  };
}

/** Stores a consumer's position as the stream passes events. */
interface Committer {
  /** Undefined when there is nothing to store (no consumer name): the stream need not wait. */
  commit(cursor: number): Promise<void> | undefined;
  /** Resolves once every position asked for is stored (or its write failed). */
  settled(): Promise<void>;
}

/** The error a position refused by a closed ledger becomes: the loop learns its last event was not recorded. */
function refusedAfterClose(consumer: string, cursor: number, cause: unknown): RuntimeError {
  return new RuntimeError(
    'runtime_closed',
    `events: the runtime closed before consumer "${consumer}" stored its position at cursor ${cursor}; ` +
      'that event is delivered again when the consumer next starts',
    { cause, details: { consumer, cursor } },
  );
}

/**
 * Store a consumer's position; writes are chained so they land in order. The stream awaits each one before it
 * yields the next event, so a crash re-delivers at most the event that was being handled. A position the ledger
 * refuses because the runtime closed rejects with `runtime_closed` naming it (the loop sees it: never lost
 * silently); any other failure goes to `onError`.
 */
function createCommitter(source: EventSource, options: CheckedStreamOptions, lost: () => boolean): Committer {
  let chain: Promise<void> = Promise.resolve();
  const { consumer, sessionKey } = options;
  return {
    /** Undefined when there is nothing to store (no consumer name, or another worker reads it now). */
    commit(cursor: number): Promise<void> | undefined {
      if (consumer === undefined || lost()) return undefined;
      const position = {
        consumer,
        ...(sessionKey === undefined ? {} : { sessionKey }),
        cursor,
        updatedAt: source.clock.now(),
      };
      const stored = chain.then(() => source.ledger.putConsumer(position));
      chain = stored.catch(() => undefined);
      return stored.catch((error: unknown) => {
        if (isRuntimeError(error, 'runtime_closed')) throw refusedAfterClose(consumer, cursor, error);
        source.onError(error);
      });
    },
    settled: () => chain,
  };
}

/** What one stream holds while it runs, from `openStream`. */
interface OpenStream {
  readonly options: CheckedStreamOptions;
  readonly accepts: (event: RuntimeEvent) => boolean;
  readonly buffer: LiveBuffer;
  readonly committer: Committer;
  readonly across: Across;
  /**
   * True once the signal aborted or the runtime closed: the stream ends when the buffer is drained. Throws
   * `fenced` once another process took the consumer over.
   */
  readonly over: () => boolean;
  /**
   * Hold the consumer across processes (false: the stream ended first), then subscribe to the live events. Held
   * before the stored position is read, so a standby taking over starts after the holder's last commit; a standby
   * buffers nothing while it waits.
   */
  readonly hold: () => Promise<boolean>;
  /** Stop listening: unsubscribe from the bus and from the signal. */
  readonly detach: () => void;
  /** Give the consumer's name back; undefined for a stream with no name. */
  readonly release: (() => void) | undefined;
  /** The stream's place among its runtime's open streams (see runtime-streams.ts). */
  readonly ticket: StreamTicket;
}

/** Reserve the consumer's name for this stream; the release function, or undefined for a stream with no name. */
function claimConsumer(bus: EventBus, options: CheckedStreamOptions): (() => void) | undefined {
  if (options.consumer === undefined) return undefined;
  const release = bus.claimConsumer(`${options.consumer}\u0000${options.sessionKey ?? ''}`);
  if (release === undefined) {
    throw new RuntimeError('invalid_input', `events: consumer "${options.consumer}" is already being read`);
  }
  return release;
}

/** Claim the consumer's name here, and watch for the stream's end; `hold` subscribes to the live events. */
function openStream(source: EventSource, options: CheckedStreamOptions): OpenStream {
  const { bus } = source;
  const release = claimConsumer(bus, options);
  const types = options.types === undefined ? undefined : new Set<EventType>(options.types);
  const accepts = (event: RuntimeEvent): boolean => types === undefined || types.has(event.type);
  const buffer = createLiveBuffer(source.bufferLimit ?? liveBufferLimit, source.onBufferSize);
  let ended = false;
  // Aborts when the stream must end: a standby waiting to hold the consumer across processes stops waiting.
  const ending = new AbortController();
  const stop = (): void => {
    ended = true;
    ending.abort();
    buffer.wakeUp();
  };
  let unsubscribe = (): void => undefined;
  const across = createAcross(source.claimAcross, options, stop, ending.signal);
  const hold = async (): Promise<boolean> => {
    if (!(await across.take())) return false;
    unsubscribe = bus.subscribe((event) => {
      if (accepts(event)) buffer.push(event);
    }, options.sessionKey);
    return true;
  };
  const over = (): boolean => {
    across.throwIfLost();
    return ended || options.signal?.aborted === true;
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  // Held by the runtime's registry only while the stream is open: nothing of it stays once it ended.
  const ticket = runtimeStreamsOf(source.closed).track(
    { closing: stop, closed: () => void bus.flushed().then(stop) },
    options.consumer !== undefined,
  );
  const detach = (): void => {
    unsubscribe();
    options.signal?.removeEventListener('abort', stop);
  };
  const committer = createCommitter(source, options, () => across.lost());
  return { options, accepts, buffer, committer, across, over, hold, detach, release, ticket };
}

/** Whether the stream may yield its next event: after a pending check of the consumer across processes. */
function mayYield(stream: OpenStream): boolean | Promise<boolean> {
  const checking = stream.across.check();
  if (checking === undefined) return !stream.ticket.halted();
  return checking.then(() => !stream.ticket.halted());
}

/** What a stream gives back at its end: the position of the event being handled, the names it held. */
async function endStream(stream: OpenStream, handling: number | undefined): Promise<void> {
  stream.detach();
  try {
    if (handling !== undefined) await stream.committer.commit(handling);
  } finally {
    await stream.committer.settled();
    await stream.across.release();
    stream.release?.();
    stream.ticket.done();
  }
}

/**
 * The stream's body (see `streamEvents`). One generator with no delegation: a `yield*` would add microtask hops
 * to every event, and a listener awaiting a run's end must have its `run.ended` by then. Each await below is
 * skipped when there is nothing to wait for.
 */
async function* runStream(
  source: EventSource,
  rawOptions: CheckedStreamOptions,
): AsyncGenerator<RuntimeEvent, void, undefined> {
  // Checked before subscribing, so bad options change nothing (and leak no listener).
  const stream = openStream(source, checkStreamOptions(rawOptions));
  const { buffer, committer } = stream;
  const { bus } = source;
  let handling: number | undefined;
  try {
    await runtimeStreamsOf(source.closed).readyOrClosed(bus.ready);
    if (!(await stream.hold())) return;
    const position = await startPosition(source, stream);
    // Replay up to what was delivered when the subscription started; later events are in the buffer.
    let until = bus.delivered;
    for (;;) {
      let events: readonly RuntimeEvent[];
      if (until > position.last) {
        events = (await readStretch(source.ledger, position, until)) ?? [];
      } else if (buffer.overflowed) {
        // A slow consumer: what was dropped is durable, so read it back and buffer only what comes from now on.
        buffer.reset();
        until = bus.delivered;
        continue;
      } else {
        const next = buffer.take();
        if (next === undefined) {
          if (stream.over()) return;
          await buffer.next();
          continue;
        }
        if (next.cursor <= position.last) continue;
        position.last = next.cursor;
        events = [next];
      }
      for (const event of events) {
        const go = mayYield(stream);
        if (!(typeof go === 'boolean' ? go : await go)) return;
        handling = event.cursor;
        yield event;
        // The consumer asked for the next one: the previous one is processed.
        handling = undefined;
        const stored = committer.commit(event.cursor);
        if (stored !== undefined) await stored;
      }
    }
  } finally {
    await endStream(stream, handling);
  }
}

/**
 * Replay the recorded events after the start, then follow live ones, with no gap and no repeat: the live
 * subscription starts before the replay and events are deduplicated by cursor. Only durable events are yielded.
 * Ends when `signal` aborts or the runtime closed (after every event emitted before the close). A durable
 * consumer's stream stops once close begins: it yields nothing more, and the event its loop is handling counts as
 * processed when the loop asks for the next one (close waits for that, within its timeout). A durable consumer
 * another process holds is waited for (`claimAcross`); one lost to another process ends the stream with `fenced`.
 * An `after` past the end of the log is `invalid_input` at the first step; its check starts at once, beside the
 * stream (`eventStreamStarted`).
 */
export function streamEvents(
  source: EventSource,
  rawOptions: CheckedStreamOptions,
): AsyncGenerator<RuntimeEvent, void, undefined> {
  const stream = runStream(source, rawOptions);
  keepStart(stream, source, rawOptions);
  return stream;
}
