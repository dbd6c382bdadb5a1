import type { Clock } from '../core/index.js';
import { createDeferred } from '../core/index.js';
import type { EventInput, RuntimeEvent } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';

/** The per-session counter the bus stamps `seq` from. */
export interface SeqHolder {
  readonly key: string;
  lastSeq: number;
}

/** A live subscriber. */
export type EventListener = (event: RuntimeEvent) => void;

/** Stamps events (per-session `seq`, global `cursor`, `at`), records them, and fans them out once durable. */
export interface EventBus {
  /**
   * Stamp, record and (once durable) deliver an event. With `unrecorded`, the event is delivered live in its turn
   * without a ledger write (`ledger.unavailable`: the ledger cannot take it).
   */
  emit(session: SeqHolder, input: EventInput, options?: { readonly unrecorded?: boolean }): RuntimeEvent;
  /** Listen to every event, or to one session's; returns the unsubscribe function. */
  subscribe(listener: EventListener, sessionKey?: string): () => void;
  /** Resolves once every event emitted so far is in the ledger and was delivered (or its write failed). */
  flushed(): Promise<void>;
  /** Resolves once every event up to `cursor` was delivered to the subscribers (or its write failed). */
  deliveredThrough(cursor: number): Promise<void>;
  /** The cursor of the last event emitted. */
  readonly cursor: number;
  /** The cursor of the last event delivered live: every event up to it is durable (or its write failed). */
  readonly delivered: number;
  /** Continue numbering after `cursor` (the ledger's last, read once at start). */
  seek(cursor: number): void;
  /** Resolves at the first `seek`: from then on `delivered` stands for the whole log. */
  readonly ready: Promise<void>;
  /** Reserve a durable consumer's name (one iterator per name at a time); undefined when it is taken. */
  claimConsumer(key: string): (() => void) | undefined;
}

/** An emitted event on its way to the subscribers. */
interface Outgoing {
  readonly event: RuntimeEvent;
  state: 'writing' | 'durable' | 'failed';
}

/** The live subscribers, to every event or to one session's. */
class Listeners {
  private readonly everyone = new Set<EventListener>();
  private readonly bySession = new Map<string, Set<EventListener>>();

  constructor(private readonly onError: (error: unknown) => void) {}

  subscribe(listener: EventListener, sessionKey: string | undefined): () => void {
    const everyone = this.everyone;
    if (sessionKey === undefined) {
      everyone.add(listener);
      return () => everyone.delete(listener);
    }
    const bySession = this.bySession;
    let listeners = bySession.get(sessionKey);
    if (listeners === undefined) bySession.set(sessionKey, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) bySession.delete(sessionKey);
    };
  }

  deliver(event: RuntimeEvent): void {
    this.deliverTo(this.everyone, event);
    this.deliverTo(this.bySession.get(event.sessionKey), event);
  }

  private deliverTo(listeners: Set<EventListener> | undefined, event: RuntimeEvent): void {
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }
}

/** Emitted events not yet delivered, in cursor order: each goes to the listeners once written. */
class Outbox {
  /** The cursor of the last event delivered (or whose write failed). */
  delivered = 0;
  // Emitted events not yet delivered, in cursor order; `head` is the first one still waiting.
  private outgoing: Outgoing[] = [];
  private head = 0;
  private flushWaiters: (() => void)[] = [];
  private deliveryWaiters: { readonly cursor: number; readonly resolve: () => void }[] = [];

  constructor(
    private readonly listeners: Listeners,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** True when every event queued so far was delivered (or its write failed). */
  get empty(): boolean {
    return this.head >= this.outgoing.length;
  }

  /** Queue `event`, write it to `ledger`, and deliver it once the write settled. */
  add(event: RuntimeEvent, ledger: Pick<Ledger, 'appendEvents' | 'writesAreImmediate'> | undefined): void {
    if (this.empty && (ledger === undefined || ledger.writesAreImmediate === true)) {
      // Nothing before it waits and its write is done when the call returns: delivered at once, unqueued.
      ledger?.appendEvents([event]).catch(this.onError);
      this.deliverNow(event);
      return;
    }
    const entry: Outgoing = { event, state: 'writing' };
    this.outgoing.push(entry);
    if (ledger === undefined) {
      this.settle(entry, 'durable');
      return;
    }
    const written = ledger.appendEvents([event]);
    if (ledger.writesAreImmediate === true) {
      // Nothing to commit later (the memory ledger): deliver in this stretch, as the write is done. A write that
      // failed is reported; no closure or promise per event (a catch on its shared settled write allocates none).
      this.settle(entry, 'durable');
      written.catch(this.onError);
      return;
    }
    written.then(
      () => this.settle(entry, 'durable'),
      (error: unknown) => {
        this.onError(error);
        this.settle(entry, 'failed');
      },
    );
  }

  flushed(): Promise<void> {
    if (this.empty) return Promise.resolve();
    return new Promise<void>((resolve) => this.flushWaiters.push(resolve));
  }

  /** Resolves once every event up to `cursor` was delivered (or its write failed). */
  deliveredThrough(cursor: number): Promise<void> {
    if (this.delivered >= cursor) return Promise.resolve();
    return new Promise<void>((resolve) => this.deliveryWaiters.push({ cursor, resolve }));
  }

  /** Deliver an event nothing queued waits before (as `release` would, without queueing it). */
  private deliverNow(event: RuntimeEvent): void {
    this.delivered = event.cursor;
    this.listeners.deliver(event);
    if (this.deliveryWaiters.length > 0) this.resolveDeliveries();
  }

  private settle(entry: Outgoing, state: 'durable' | 'failed'): void {
    if (entry.state !== 'writing') return;
    entry.state = state;
    this.release();
  }

  /** Resolve the delivery waiters whose cursor was reached. */
  private resolveDeliveries(): void {
    const reached = this.deliveryWaiters.filter((waiter) => waiter.cursor <= this.delivered);
    if (reached.length === 0) return;
    this.deliveryWaiters = this.deliveryWaiters.filter((waiter) => waiter.cursor > this.delivered);
    for (const waiter of reached) waiter.resolve();
  }

  /** Deliver the settled prefix of `outgoing`: an event never overtakes an earlier one still being written. */
  private release(): void {
    while (this.head < this.outgoing.length) {
      const next = this.outgoing[this.head] as Outgoing;
      if (next.state === 'writing') break;
      this.head++;
      this.delivered = next.event.cursor;
      if (next.state !== 'failed') this.listeners.deliver(next.event);
    }
    if (this.deliveryWaiters.length > 0) this.resolveDeliveries();
    if (this.head < this.outgoing.length) {
      if (this.head > 1024) {
        this.outgoing = this.outgoing.slice(this.head);
        this.head = 0;
      }
      return;
    }
    this.outgoing = [];
    this.head = 0;
    const waiters = this.flushWaiters;
    this.flushWaiters = [];
    for (const waiter of waiters) waiter();
  }
}

/** The stamped fields of an event, writable while the bus stamps them. */
interface Stamp {
  sessionKey: string;
  seq: number;
  cursor: number;
  at: number;
}

/**
 * The event of `input`, stamped: `input` itself, its stamp added in place (one object per event, no copy of its
 * payload), unless it was stamped already (emitted before) or frozen, which are copied. Emitters build each input
 * for its one emit and never change it after.
 */
function stamp(input: EventInput, sessionKey: string, seq: number, cursor: number, at: number): RuntimeEvent {
  if ('cursor' in input || !Object.isExtensible(input)) return { ...input, sessionKey, seq, cursor, at };
  const event = input as EventInput & Stamp;
  event.sessionKey = sessionKey;
  event.seq = seq;
  event.cursor = cursor;
  event.at = at;
  return event;
}

/**
 * Create the bus. Each event goes to the ledger as it is emitted, in the same synchronous stretch as the writes
 * around it (closing a run and its run.ended event), so group commit puts them in one transaction: a crash cannot
 * keep one without the other.
 *
 * Subscribers see an event only once its write committed, and in cursor order (an event waits for every earlier
 * one, so a coalesced token delta holds back what follows it). So a cursor a consumer has seen is durable and is
 * never given to another event after a crash; an event whose write failed is not delivered (it is not in the
 * ledger either). Delivering after the commit also means the state changes made in the stretch that emitted an
 * event are done when a subscriber sees it.
 */
export function createEventBus(options: {
  ledger: Ledger;
  clock: Clock;
  onError: (error: unknown) => void;
}): EventBus {
  const { ledger, clock, onError } = options;
  const listeners = new Listeners(onError);
  const outbox = new Outbox(listeners, onError);
  const consumers = new Set<string>();
  const started = createDeferred<void>();
  let cursor = 0;

  return {
    emit(session, input, emitOptions) {
      const event = stamp(input, session.key, ++session.lastSeq, ++cursor, clock.now());
      outbox.add(event, emitOptions?.unrecorded === true ? undefined : ledger);
      return event;
    },
    subscribe: (listener, sessionKey) => listeners.subscribe(listener, sessionKey),
    flushed: () => outbox.flushed(),
    deliveredThrough: (cursor) => outbox.deliveredThrough(cursor),
    get cursor() {
      return cursor;
    },
    get delivered() {
      return outbox.delivered;
    },
    seek(next) {
      cursor = Math.max(cursor, next);
      if (outbox.empty) outbox.delivered = Math.max(outbox.delivered, cursor);
      started.resolve();
    },
    ready: started.promise,
    claimConsumer(key) {
      if (consumers.has(key)) return undefined;
      consumers.add(key);
      return () => consumers.delete(key);
    },
  };
}
