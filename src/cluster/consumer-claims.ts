import type { ConsumerHold } from '../events/index.js';
import type { Clock } from '../core/index.js';
import { createDeferred, type Deferred } from '../core/index.js';
import type { ClusterQuery } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';
import type { Doorbell } from './doorbell.js';
import type { WorkerLease } from './worker-lease.js';

/** The doorbell's ring once a worker gave a durable consumer up: the standbys try their claim at once. */
export const consumerFreeRing = 'consumer-free';

/** The claim row's key of a durable consumer: its name, and its session (none: every session's). */
export function consumerKey(consumer: string, sessionKey: string | undefined): string {
  return JSON.stringify([consumer, sessionKey ?? null]);
}

/**
 * Claim the consumer for `workerId` unless another live worker reads it (its lease still runs): true when
 * `workerId` holds it now. One statement, so two workers racing for one consumer cannot both win.
 */
export async function claimConsumer(query: ClusterQuery, key: string, workerId: string): Promise<boolean> {
  const { rowCount } = await query(
    `INSERT INTO cluster_consumers AS c (consumer_key, worker_id, claimed_at) VALUES ($1, $2, ${nowMs})
     ON CONFLICT (consumer_key) DO UPDATE SET worker_id = excluded.worker_id, claimed_at = excluded.claimed_at
       WHERE c.worker_id = excluded.worker_id OR NOT EXISTS (
         SELECT 1 FROM cluster_workers w WHERE w.worker_id = c.worker_id AND w.lease_until > ${nowMs})
     RETURNING worker_id`,
    [key, workerId],
  );
  return rowCount === 1;
}

/** Give the consumer up (only when `workerId` still holds it). */
export async function releaseConsumer(query: ClusterQuery, key: string, workerId: string): Promise<void> {
  await query('DELETE FROM cluster_consumers WHERE consumer_key = $1 AND worker_id = $2', [key, workerId]);
}

/** Forget the claims of workers whose row is gone (pruned long after their lease ran out): free anyway. */
export async function pruneConsumers(query: ClusterQuery): Promise<void> {
  await query(
    `DELETE FROM cluster_consumers c
     WHERE NOT EXISTS (SELECT 1 FROM cluster_workers w WHERE w.worker_id = c.worker_id)`,
  );
}

/** What the claims need: the cluster's connections, this worker's lease, and the standby's poll. */
export interface ConsumerClaimDeps {
  readonly query: ClusterQuery;
  readonly doorbell: Doorbell;
  readonly lease: WorkerLease;
  readonly clock: Clock;
  readonly pollMs: number;
  readonly onError: (error: unknown) => void;
}

/** This worker's durable consumers: hold one (waiting as a standby), drop them all when the lease is lost. */
export interface ConsumerClaims {
  /** Hold `key`, waiting while another live worker reads it; undefined once `signal` aborted (or on close). */
  hold(key: string, signal: AbortSignal): Promise<ConsumerHold | undefined>;
  /** The lease of `previousWorkerId` was lost: every consumer it held may be another worker's now. */
  lost(previousWorkerId: string): void;
  /** Give every consumer back (the worker is leaving), ringing the standbys. */
  close(): Promise<void>;
}

/** Resolves after `pollMs`, at a `consumer-free` ring, or once `signal` aborts: the next try of a standby. */
function nextTry(deps: ConsumerClaimDeps, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    // Called back only after this function returned: the timer and the subscription exist by then.
    const done = (): void => {
      deps.clock.clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = deps.clock.setTimeout(done, deps.pollMs);
    const unsubscribe = deps.doorbell.on(consumerFreeRing, done);
    signal.addEventListener('abort', done, { once: true });
    if (signal.aborted) done();
  });
}

/** Create this worker's consumer claims. */
export function createConsumerClaims(deps: ConsumerClaimDeps): ConsumerClaims {
  const { query, lease } = deps;
  const held = new Map<Deferred<void>, string>();
  let closed = false;
  const ring = (): Promise<void> => deps.doorbell.ring(consumerFreeRing).catch(() => undefined);
  const holdOf = (key: string, workerId: string): ConsumerHold => {
    const lost = createDeferred<void>();
    held.set(lost, workerId);
    // Lost between the claim and now: the claim was made under an id that is no longer this worker's.
    if (lease.workerId !== workerId) lost.resolve();
    const stillMine = (): boolean => held.has(lost) && lease.workerId === workerId;
    return {
      lost: lost.promise,
      async confirm() {
        // After close the lease is gone on purpose: the stream drains what it has (its commits fail: at least once).
        if (!closed && stillMine() && !lease.valid()) await lease.renew();
        return stillMine();
      },
      async release() {
        if (!held.delete(lost) || closed) return;
        await releaseConsumer(query, key, workerId).catch(() => undefined);
        await ring();
      },
    };
  };
  const tryClaim = async (key: string): Promise<ConsumerHold | undefined> => {
    if (!lease.valid()) await lease.renew();
    const workerId = lease.workerId;
    return (await claimConsumer(query, key, workerId)) ? holdOf(key, workerId) : undefined;
  };
  return {
    async hold(key, signal) {
      while (!signal.aborted && !closed) {
        // A failed try (the database unreachable) is reported and tried again: a standby keeps waiting.
        const hold = await tryClaim(key).catch((error: unknown) => void deps.onError(error));
        if (hold !== undefined && (signal.aborted || closed)) await hold.release();
        else if (hold !== undefined) return hold;
        else await nextTry(deps, signal);
      }
      return undefined;
    },
    lost(previousWorkerId) {
      for (const [lost, workerId] of held) {
        if (workerId !== previousWorkerId) continue;
        held.delete(lost);
        lost.resolve();
      }
    },
    async close() {
      closed = true;
      await query('DELETE FROM cluster_consumers WHERE worker_id = $1', [lease.workerId]).catch(deps.onError);
      await ring();
    },
  };
}

/** What the cluster's consumer methods need from a started cluster. */
export interface ConsumerParts {
  readonly consumers: ConsumerClaims;
}

/** The cluster's durable consumers (`Cluster` has them): each read by one worker of the cluster at a time. */
export interface ClusterConsumers {
  /**
   * Hold the consumer `key` (see `consumerKey`), waiting as a standby while another live worker reads it;
   * undefined once `signal` aborted first. The hold is lost with this worker's lease.
   */
  holdConsumer(key: string, signal: AbortSignal): Promise<ConsumerHold | undefined>;
}

/** Resolves (undefined) once `signal` aborts. */
function abortedOf(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}

/** The consumer methods of a cluster; they wait for its start (`started`). */
export function clusterConsumers(started: Promise<ConsumerParts>): ClusterConsumers {
  return {
    async holdConsumer(key, signal) {
      const ready = await Promise.race([started, abortedOf(signal)]);
      return ready === undefined ? undefined : ready.consumers.hold(key, signal);
    },
  };
}
