import type { Clock } from '../core/clock.js';
import type { EventInput, RuntimeEvent } from '../core/events.js';
import type { Ledger } from '../ledger/ledger.js';

/** The per-session counter the bus stamps `seq` from. */
export interface SeqHolder {
  readonly key: string;
  lastSeq: number;
}

/** A live subscriber. */
export type EventListener = (event: RuntimeEvent) => void;

/** Stamps events (per-session `seq`, global `cursor`, `at`), records them, and fans them out live. */
export interface EventBus {
  emit(session: SeqHolder, input: EventInput): RuntimeEvent;
  /** Listen to every event, or to one session's; returns the unsubscribe function. */
  subscribe(listener: EventListener, sessionKey?: string): () => void;
  /** Resolves once every event emitted so far is in the ledger (writes complete in order). */
  flushed(): Promise<void>;
  /** The cursor of the last event emitted. */
  readonly cursor: number;
  /** Continue numbering after `cursor` (the ledger's last, read once at start). */
  seek(cursor: number): void;
}

/**
 * Create the bus. Each event goes to the ledger as it is emitted, in the same synchronous stretch as the writes
 * around it (closing a run and its run.ended event), so group commit puts them in one transaction: a crash cannot
 * keep one without the other.
 */
export function createEventBus(options: {
  ledger: Ledger;
  clock: Clock;
  onError: (error: unknown) => void;
}): EventBus {
  const { ledger, clock, onError } = options;
  let cursor = 0;
  let lastWrite: Promise<void> = Promise.resolve();
  const everyone = new Set<EventListener>();
  const bySession = new Map<string, Set<EventListener>>();

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

  return {
    emit(session, input) {
      const event = {
        ...input,
        sessionKey: session.key,
        seq: ++session.lastSeq,
        cursor: ++cursor,
        at: clock.now(),
      };
      lastWrite = ledger.appendEvents([event]).catch(onError);
      deliver(everyone, event);
      deliver(bySession.get(session.key), event);
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
    async flushed() {
      await lastWrite;
    },
    get cursor() {
      return cursor;
    },
    seek(next) {
      cursor = Math.max(cursor, next);
    },
  };
}
