import type { Client } from 'pg';
import type { Clock, TimerHandle } from '../core/index.js';
import type { ClusterDatabase, ClusterQuery } from './cluster-db.js';
import { doorbellChannel } from './cluster-schema.js';

/**
 * LISTEN/NOTIFY on the cluster's channel. A ring is only a hint that a row changed: every reader also polls, so a
 * ring lost while the listener reconnects delays the work by one poll at most, never loses it.
 */
export interface Doorbell {
  /** Call `listener` for every ring with this payload; returns the unsubscribe function. */
  on(payload: string, listener: () => void): () => void;
  /** Ring `payload` (inside the caller's transaction when `query` is one: delivered on commit). */
  ring(payload: string, query?: ClusterQuery): Promise<void>;
  close(): Promise<void>;
}

const reconnectMs = 1_000;

/** Open the doorbell: a dedicated connection that LISTENs, reconnecting after a failure. */
export function openDoorbell(
  database: ClusterDatabase,
  clock: Clock,
  onError: (error: unknown) => void,
): Doorbell {
  const listeners = new Map<string, Set<() => void>>();
  let client: Client | undefined;
  let closed = false;
  let timer: TimerHandle;
  const dispatch = (payload: string | undefined): void => {
    for (const listener of listeners.get(payload ?? '') ?? []) listener();
  };
  const connect = async (): Promise<void> => {
    timer = undefined;
    if (closed) return;
    try {
      const next = await database.connectListener();
      next.on('notification', (message) => dispatch(message.payload));
      next.on('error', () => retry(next));
      next.on('end', () => retry(next));
      await next.query(`LISTEN ${doorbellChannel}`);
      if (closed) await next.end();
      else client = next;
      // Whatever rang while no one listened is found by the readers' next poll; wake them now instead.
      for (const set of listeners.values()) for (const listener of set) listener();
    } catch (error) {
      onError(error);
      timer ??= clock.setTimeout(() => void connect(), reconnectMs);
    }
  };
  const retry = (broken: Client): void => {
    if (client !== broken || closed) return;
    client = undefined;
    broken.end().catch(() => undefined);
    timer ??= clock.setTimeout(() => void connect(), reconnectMs);
  };
  const started = connect();
  return {
    on(payload, listener) {
      let set = listeners.get(payload);
      if (set === undefined) listeners.set(payload, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        // Rings of one call each (a forwarded call's answer) must not leave their payloads behind.
        if (set.size === 0 && listeners.get(payload) === set) listeners.delete(payload);
      };
    },
    async ring(payload, query = database.query) {
      await query('SELECT pg_notify($1, $2)', [doorbellChannel, payload]);
    },
    async close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await started;
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
