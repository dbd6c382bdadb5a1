import type { Clock, TimerHandle } from '../core/index.js';
import { isRuntimeError } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { Doorbell } from './doorbell.js';
import type { Ledger } from '../ledger/index.js';
import type { EventBus, EventListener } from '../events/index.js';

/** The doorbell's ring once a worker wrote events. */
export const eventsRing = 'events';

const pageSize = 500;

/** What the tail needs: the ledger it reads, the local bus, and the cluster's doorbell. */
export interface EventTailDeps {
  readonly ledger: Ledger;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly pollMs: number;
  readonly doorbell: () => Promise<Doorbell>;
  readonly onError: (error: unknown) => void;
}

/** Run `work` when asked; asking while it runs makes it run once more afterwards (never twice at once). */
function coalescing(work: () => Promise<void>, onError: (error: unknown) => void): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async (): Promise<void> => {
    try {
      do {
        again = false;
        await work();
      } while (again);
    } catch (error) {
      // Reads racing the close find the ledger closed: nothing is lost, the streams end with the runtime.
      if (!isRuntimeError(error, 'runtime_closed')) onError(error);
    } finally {
      running = undefined;
    }
  };
  return () => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    return (running = run());
  };
}

/** Listeners to every event or to one session's. */
function createListeners(onError: (error: unknown) => void) {
  const everyone = new Set<EventListener>();
  const bySession = new Map<string, Set<EventListener>>();
  return {
    size: () => everyone.size + bySession.size,
    add(listener: EventListener, sessionKey: string | undefined): () => void {
      let set = everyone;
      if (sessionKey !== undefined) {
        set = bySession.get(sessionKey) ?? new Set();
        bySession.set(sessionKey, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (sessionKey !== undefined && set.size === 0) bySession.delete(sessionKey);
      };
    },
    deliver(event: RuntimeEvent): void {
      for (const listener of [...everyone, ...(bySession.get(event.sessionKey) ?? [])]) {
        try {
          listener(event);
        } catch (error) {
          onError(error);
        }
      }
    },
  };
}

/**
 * Where a tail nobody listens to keeps its cursor (where a new listener starts): near the log's end, from the local
 * bus at each pump, and from the log at most once per `pollMs` (not a read per local delivery and per ring).
 */
function createIdleCursor(deps: EventTailDeps): (cursor: number) => Promise<number> {
  let lastRead = Number.NEGATIVE_INFINITY;
  return async (cursor) => {
    const near = Math.max(cursor, deps.bus.delivered);
    if (deps.clock.now() - lastRead < deps.pollMs) return near;
    lastRead = deps.clock.now();
    return Math.max(near, await deps.ledger.lastCursor());
  };
}

/**
 * The event bus as streams of a cluster worker see it: every worker's events, read back from the log in cursor
 * order (which is commit order), at each ring of the doorbell, each local delivery, and every `pollMs` while
 * someone listens. Emitting stays the local bus's.
 */
export function createEventTail(deps: EventTailDeps): EventBus & { stop(): void } {
  const { ledger, bus, clock } = deps;
  const listeners = createListeners(deps.onError);
  let cursor = 0;
  let started = false;
  let stopped = false;
  let timer: TimerHandle;
  const listening = (): boolean => listeners.size() > 0;
  const idleCursor = createIdleCursor(deps);
  const pump = coalescing(async () => {
    if (!started || stopped) return;
    if (!listening()) {
      cursor = Math.max(cursor, await idleCursor(cursor));
      return;
    }
    for (;;) {
      const page = await ledger.readEvents({ after: cursor, limit: pageSize });
      for (const event of page.filter((read) => read.cursor > cursor)) {
        cursor = event.cursor;
        listeners.deliver(event);
      }
      if (page.length < pageSize) return;
    }
  }, deps.onError);
  const tick = (): void => {
    timer = undefined;
    if (stopped) return;
    void pump().finally(() => {
      if (!stopped && listening()) timer ??= clock.setTimeout(tick, deps.pollMs);
    });
  };
  const ready = bus.ready.then(async () => {
    cursor = Math.max(cursor, bus.delivered);
    started = true;
    bus.subscribe(() => void pump());
    (await deps.doorbell()).on(eventsRing, () => void pump());
  });
  const subscribe = (listener: EventListener, sessionKey?: string): (() => void) => {
    timer ??= clock.setTimeout(tick, deps.pollMs);
    return listeners.add(listener, sessionKey);
  };
  return {
    ...bus,
    subscribe,
    get cursor() {
      return bus.cursor;
    },
    get delivered() {
      return cursor;
    },
    ready: ready.catch(deps.onError),
    flushed: () => bus.flushed().then(pump),
    emit: (session, input, options) => bus.emit(session, input, options),
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}
