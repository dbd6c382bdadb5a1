import type { Clock } from '../core/clock.js';
import { createDeferred } from '../core/deferred.js';
import type { EventInput, RuntimeEvent } from '../core/events.js';
import type { Ledger } from '../ledger/ledger.js';

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
   * Stamp, record and (once durable) deliver an event. With `untilAdopted`, an event announcing a run's pause or
   * end (see `outcomeTypes`) is also held until `adopted` is called for its session.
   */
  emit(session: SeqHolder, input: EventInput, options?: { readonly untilAdopted?: boolean }): RuntimeEvent;
  /** Listen to every event, or to one session's; returns the unsubscribe function. */
  subscribe(listener: EventListener, sessionKey?: string): () => void;
  /** Resolves once every event emitted so far is in the ledger and was delivered (or its write failed). */
  flushed(): Promise<void>;
  /** The cursor of the last event emitted. */
  readonly cursor: number;
  /** The cursor of the last event delivered live: every event up to it is durable (or its write failed). */
  readonly delivered: number;
  /** Continue numbering after `cursor` (the ledger's last, read once at start). */
  seek(cursor: number): void;
  /** Resolves at the first `seek`: from then on `delivered` stands for the whole log. */
  readonly ready: Promise<void>;
  /**
   * The session's machine adopted its run's pause or end: deliver the events that announce it (held until now,
   * so a subscriber acting on them finds `approve`, `status()` and `waitForEnd()` already agreeing).
   */
  adopted(sessionKey: string): void;
  /** Reserve a durable consumer's name (one iterator per name at a time); undefined when it is taken. */
  claimConsumer(key: string): (() => void) | undefined;
}

/** An emitted event on its way to the subscribers. */
interface Outgoing {
  readonly event: RuntimeEvent;
  state: 'writing' | 'durable' | 'failed';
  /** Waits for the session machine to adopt what the event announces (see `outcomeTypes`). */
  held: boolean;
}

/**
 * Events a run emits before the session machine learns the run's outcome. Emitted `untilAdopted`, they are held
 * until the machine adopted it (`adopted`), or at the latest until the next macrotask (so a run the machine never
 * hears of cannot hold the bus).
 */
const outcomeTypes: ReadonlySet<RuntimeEvent['type']> = new Set([
  'approval.requested',
  'tool.deferred',
  'run.paused',
  'run.ended',
]);

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
  let cursor = 0;
  let delivered = 0;
  // Emitted events not yet delivered, in cursor order; `head` is the first one still waiting.
  let outgoing: Outgoing[] = [];
  let head = 0;
  let flushWaiters: (() => void)[] = [];
  const everyone = new Set<EventListener>();
  const bySession = new Map<string, Set<EventListener>>();
  const consumers = new Set<string>();
  const started = createDeferred<void>();

  const deliver = (listeners: Set<EventListener> | undefined, event: RuntimeEvent): void => {
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        onError(error);
      }
    }
  };

  /** Deliver the settled prefix of `outgoing`: an event never overtakes an earlier one still being written. */
  const release = (): void => {
    while (head < outgoing.length) {
      const next = outgoing[head] as Outgoing;
      if (next.state === 'writing' || next.held) break;
      head++;
      delivered = next.event.cursor;
      if (next.state === 'failed') continue;
      deliver(everyone, next.event);
      deliver(bySession.get(next.event.sessionKey), next.event);
    }
    if (head < outgoing.length) {
      if (head > 1024) {
        outgoing = outgoing.slice(head);
        head = 0;
      }
      return;
    }
    outgoing = [];
    head = 0;
    const waiters = flushWaiters;
    flushWaiters = [];
    for (const waiter of waiters) waiter();
  };

  return {
    emit(session, input, emitOptions) {
      const event = {
        ...input,
        sessionKey: session.key,
        seq: ++session.lastSeq,
        cursor: ++cursor,
        at: clock.now(),
      };
      const held = emitOptions?.untilAdopted === true && outcomeTypes.has(event.type);
      const entry: Outgoing = { event, state: 'writing', held };
      outgoing.push(entry);
      if (entry.held) {
        setImmediate(() => {
          if (!entry.held) return;
          entry.held = false;
          release();
        });
      }
      const written = ledger.appendEvents([event]);
      if (ledger.writesAreImmediate === true) {
        // Nothing to commit later (the memory ledger): deliver in this stretch, as the write is done.
        entry.state = 'durable';
        release();
      }
      written.then(
        () => {
          if (entry.state !== 'writing') return;
          entry.state = 'durable';
          release();
        },
        (error: unknown) => {
          onError(error);
          if (entry.state !== 'writing') return;
          entry.state = 'failed';
          release();
        },
      );
      return event;
    },
    subscribe(listener, sessionKey) {
      if (sessionKey === undefined) {
        everyone.add(listener);
        return () => everyone.delete(listener);
      }
      let listeners = bySession.get(sessionKey);
      if (listeners === undefined) bySession.set(sessionKey, (listeners = new Set()));
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) bySession.delete(sessionKey);
      };
    },
    flushed() {
      if (head >= outgoing.length) return Promise.resolve();
      return new Promise<void>((resolve) => flushWaiters.push(resolve));
    },
    get cursor() {
      return cursor;
    },
    get delivered() {
      return delivered;
    },
    seek(next) {
      cursor = Math.max(cursor, next);
      if (head >= outgoing.length) delivered = Math.max(delivered, cursor);
      started.resolve();
    },
    ready: started.promise,
    adopted(sessionKey) {
      let changed = false;
      for (let index = head; index < outgoing.length; index++) {
        const entry = outgoing[index] as Outgoing;
        if (entry.held && entry.event.sessionKey === sessionKey) {
          entry.held = false;
          changed = true;
        }
      }
      if (changed) release();
    },
    claimConsumer(key) {
      if (consumers.has(key)) return undefined;
      consumers.add(key);
      return () => consumers.delete(key);
    },
  };
}
