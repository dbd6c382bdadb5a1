import type { Clock, TimerHandle } from '../core/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';

/** This process's membership of the cluster: a worker row whose lease it renews. */
export interface WorkerLease {
  /** This incarnation's id (a new one after the lease was lost). */
  readonly workerId: string;
  /** True while the lease is surely held: renewed less than `leaseMs` (minus a margin) ago by the local clock. */
  valid(): boolean;
  /** Register and start renewing. */
  start(): Promise<void>;
  /** Renew now; resolves false when the lease was lost (the row expired or was taken). */
  renew(): Promise<boolean>;
  /** Stop renewing and delete the row: the sessions this worker owned become free at once. */
  close(): Promise<void>;
}

/** Lease timing. The takeover bound is `leaseMs` + the scan interval of the workers taking over. */
export interface LeaseTiming {
  /** How long a worker row stays valid without renewal. @default 10000 */
  readonly leaseMs: number;
  /** How often it is renewed. @default leaseMs / 3 */
  readonly renewMs: number;
}

/** What the lease needs: the database, the clock, a fresh id per incarnation, and whom to tell of a loss. */
export interface WorkerLeaseDeps {
  readonly database: ClusterDatabase;
  readonly clock: Clock;
  readonly timing: LeaseTiming;
  readonly newWorkerId: () => string;
  /** The lease was lost (a stall longer than the lease): every session this worker held is someone else's now. */
  readonly onLost: (previousWorkerId: string) => void;
  readonly onError: (error: unknown) => void;
}

/**
 * Create the lease. The local deadline starts counting when a renewal is sent, the database's when it arrives, so
 * this worker stops trusting its lease before any other worker may consider it expired (a stall between the check
 * and a write is what fencing catches).
 */
export function createWorkerLease(deps: WorkerLeaseDeps): WorkerLease {
  const { database, clock, timing } = deps;
  const margin = Math.min(1_000, timing.leaseMs / 5);
  let workerId = deps.newWorkerId();
  let deadline = 0;
  let timer: TimerHandle;
  let closed = false;
  let renewing: Promise<boolean> | undefined;
  const register = async (): Promise<void> => {
    const sentAt = clock.now();
    await database.query(
      `INSERT INTO cluster_workers (worker_id, started_at, lease_until) VALUES ($1, ${nowMs}, ${nowMs} + $2)`,
      [workerId, timing.leaseMs],
    );
    deadline = sentAt + timing.leaseMs - margin;
  };
  const renewOnce = async (): Promise<boolean> => {
    const sentAt = clock.now();
    const { rowCount } = await database.query(
      `UPDATE cluster_workers SET lease_until = ${nowMs} + $2 WHERE worker_id = $1 AND lease_until > ${nowMs}`,
      [workerId, timing.leaseMs],
    );
    if (rowCount === 1) {
      deadline = sentAt + timing.leaseMs - margin;
      return true;
    }
    const previous = workerId;
    deadline = 0;
    workerId = deps.newWorkerId();
    deps.onLost(previous);
    await register();
    return false;
  };
  const renew = (): Promise<boolean> => (renewing ??= renewOnce().finally(() => (renewing = undefined)));
  const arm = (): void => {
    if (closed) return;
    timer = clock.setTimeout(() => {
      renew().catch(deps.onError).finally(arm);
    }, timing.renewMs);
  };
  return {
    get workerId() {
      return workerId;
    },
    valid: () => !closed && clock.now() < deadline,
    async start() {
      await register();
      arm();
    },
    renew,
    async close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await renewing?.catch(() => undefined);
      await database
        .query('DELETE FROM cluster_workers WHERE worker_id = $1', [workerId])
        .catch(deps.onError);
    },
  };
}
