import { abortReason, type Clock } from '../core/index.js';
import type { GlobalLane, GlobalLaneOptions, LaneRate, LaneTaskOptions } from '../lanes/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';
import type { Doorbell } from './doorbell.js';

/** One lane's cluster-wide limits. */
interface LaneLimits {
  readonly concurrency: number;
  readonly rate: LaneRate | undefined;
}

/** What the cluster semaphore needs. `pollMs` bounds how late a freed slot is seen when its ring was missed. */
export interface ClusterLaneDeps {
  /** The cluster's connections (opened at the first call). */
  readonly opened: () => Promise<{ readonly database: ClusterDatabase; readonly doorbell: Doorbell }>;
  readonly clock: Clock;
  readonly pollMs: number;
  readonly workerId: () => string;
  readonly newToken: () => string;
}

/**
 * Take a slot of `lane` when the cluster has room: under a transaction-scoped advisory lock per lane, slots of
 * dead workers are freed, then the running count is checked and the slot recorded. Returns the slot's token, or
 * how long to wait before trying again.
 */
async function tryAcquire(
  deps: ClusterLaneDeps,
  database: ClusterDatabase,
  lane: string,
  limits: LaneLimits,
): Promise<{ token: string } | { waitMs: number }> {
  return database.transaction(async (query) => {
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agentlanes:lane:${database.schema}:${lane}`]);
    await query(
      `DELETE FROM cluster_lane_slots s WHERE s.lane = $1 AND NOT EXISTS (
         SELECT 1 FROM cluster_workers w WHERE w.worker_id = s.worker_id AND w.lease_until > ${nowMs})`,
      [lane],
    );
    const running = await query<{ count: number }>(
      'SELECT count(*)::int AS count FROM cluster_lane_slots WHERE lane = $1',
      [lane],
    );
    if ((running.rows[0]?.count ?? 0) >= limits.concurrency) return { waitMs: deps.pollMs };
    const token = deps.newToken();
    await query(
      `INSERT INTO cluster_lane_slots (token, lane, worker_id, acquired_at) VALUES ($1, $2, $3, ${nowMs})`,
      [token, lane, deps.workerId()],
    );
    return { token };
  });
}

/**
 * Take one start of `lane`'s request rate for the whole cluster: under an advisory lock per lane, the starts of the
 * window are counted and this one recorded. Undefined once taken, else how long to wait before trying again.
 */
async function tryStart(
  database: ClusterDatabase,
  lane: string,
  rate: LaneRate,
): Promise<{ waitMs: number } | undefined> {
  return database.transaction(async (query) => {
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agentlanes:rate:${database.schema}:${lane}`]);
    await query(`DELETE FROM cluster_lane_starts WHERE lane = $1 AND at <= ${nowMs} - $2`, [
      lane,
      rate.intervalMs,
    ]);
    const window = await query<{ count: number; first: number | null; now: number }>(
      `SELECT count(*)::int AS count, min(at) AS first, ${nowMs} AS now FROM cluster_lane_starts WHERE lane = $1`,
      [lane],
    );
    const { count, first, now } = window.rows[0] as { count: number; first: number | null; now: number };
    if (count >= rate.limit && first !== null) return { waitMs: Math.max(1, first + rate.intervalMs - now) };
    await query(`INSERT INTO cluster_lane_starts (lane, at) VALUES ($1, ${nowMs})`, [lane]);
    return undefined;
  });
}

/** Take one cluster-wide start of `lane`'s rate for a model request, waiting as long as the window says. */
async function paceAcrossCluster(
  deps: ClusterLaneDeps,
  lane: string,
  rate: LaneRate,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { database, doorbell } = await deps.opened();
  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    const attempt = await tryStart(database, lane, rate);
    if (attempt === undefined) return;
    await pause(deps, doorbell, `rate:${lane}`, attempt.waitMs, signal);
  }
}

/** Wait `ms`, or less when `ring` rings; rejects when `signal` aborts. */
function pause(
  deps: ClusterLaneDeps,
  doorbell: Doorbell,
  ring: string,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      off();
      deps.clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(abortReason(signal as AbortSignal));
    };
    const off = doorbell.on(ring, () => {
      done();
      resolve();
    });
    const timer = deps.clock.setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Run `task` holding a cluster-wide slot of `lane`; the slot is freed (and the lane rung) when it settles. */
export async function holdClusterSlot<T>(
  deps: ClusterLaneDeps,
  lane: string,
  limits: LaneLimits,
  task: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const { database, doorbell } = await deps.opened();
  let token: string | undefined;
  while (token === undefined) {
    if (signal?.aborted) throw abortReason(signal);
    const attempt = await tryAcquire(deps, database, lane, limits);
    if ('token' in attempt) token = attempt.token;
    else await pause(deps, doorbell, `lane:${lane}`, attempt.waitMs, signal);
  }
  try {
    return await task();
  } finally {
    const held = token;
    await database
      .query('DELETE FROM cluster_lane_slots WHERE token = $1', [held])
      .then(() => doorbell.ring(`lane:${lane}`))
      .catch(() => undefined);
  }
}

/**
 * The global lane across processes: the local lane first (this process's share and its queue order), then a
 * cluster-wide slot of the same lane (shared or the provider's own), so the concurrency cap holds for the whole
 * cluster; each model request takes its start of the rate locally, then cluster-wide. A slot held by a worker
 * whose lease ran out is freed by the next worker to ask.
 */
export function createClusterLane(
  local: GlobalLane,
  options: Pick<GlobalLaneOptions, 'concurrency' | 'rate' | 'perProvider'>,
  deps: ClusterLaneDeps,
): GlobalLane {
  const shared: LaneLimits = { concurrency: options.concurrency ?? 8, rate: options.rate };
  const laneOf = (provider: string | undefined): { name: string; limits: LaneLimits } => {
    const own = provider === undefined ? undefined : options.perProvider?.[provider];
    if (own === undefined || provider === undefined) return { name: 'global', limits: shared };
    return { name: provider, limits: { concurrency: own.concurrency ?? shared.concurrency, rate: own.rate } };
  };
  return {
    run<T>(task: () => Promise<T>, runOptions: LaneTaskOptions = {}): Promise<T> {
      const { name, limits } = laneOf(runOptions.provider);
      return local.run(() => holdClusterSlot(deps, name, limits, task, runOptions.signal), runOptions);
    },
    pace(provider, paceOptions = {}) {
      const { name, limits } = laneOf(provider);
      const localWait = local.pace(provider, paceOptions);
      const { rate } = limits;
      if (rate === undefined) return localWait;
      const across = () => paceAcrossCluster(deps, name, rate, paceOptions.signal);
      return localWait === undefined ? across() : localWait.then(across);
    },
    stats: () => local.stats(),
    close: () => local.close(),
    get closed() {
      return local.closed;
    },
  };
}
