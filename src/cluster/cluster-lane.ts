import { abortReason, type Clock } from '../core/index.js';
import type { GlobalLane, GlobalLaneOptions, LaneRate, LaneTaskOptions } from '../lanes/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';
import type { Doorbell } from './doorbell.js';
import { createLaneSeats, type LaneSeats, type SeatTiming } from './lane-seats.js';

/** One lane's cluster-wide limits. */
interface LaneLimits {
  readonly concurrency: number;
  readonly rate: LaneRate | undefined;
}

/** What the cluster lane needs. */
export interface ClusterLaneDeps {
  /** The cluster's connections (opened at the first call). */
  readonly opened: () => Promise<{ readonly database: ClusterDatabase; readonly doorbell: Doorbell }>;
  readonly clock: Clock;
  /** The seats' lease, renewal and poll (lane-seats.ts); `pollMs` also paces a rate window's retries. */
  readonly timing: SeatTiming;
  readonly workerId: () => string;
  readonly onError: (error: unknown) => void;
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

/** The seats of each lane, created at a lane's first run. */
function createSeatsByLane(deps: ClusterLaneDeps) {
  const lanes = new Map<string, Promise<LaneSeats>>();
  return {
    of(lane: string, limits: LaneLimits): Promise<LaneSeats> {
      let seats = lanes.get(lane);
      if (seats === undefined) {
        seats = deps.opened().then(({ database, doorbell }) =>
          createLaneSeats(
            {
              database,
              doorbell,
              clock: deps.clock,
              timing: deps.timing,
              workerId: deps.workerId,
              onError: deps.onError,
            },
            lane,
            limits.concurrency,
          ),
        );
        lanes.set(lane, seats);
      }
      return seats;
    },
    async close(): Promise<void> {
      const all = await Promise.all(lanes.values());
      await Promise.all(all.map((seats) => seats.close()));
    },
  };
}

/** Run `task` holding a cluster-wide seat of `lane`; the seat goes back (to this worker first) when it settles. */
async function holdSeat<T>(
  seats: Promise<LaneSeats>,
  task: () => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  const release = await (await seats).acquire(signal);
  try {
    return await task();
  } finally {
    release();
  }
}

/**
 * The global lane across processes: the local lane first (this process's share and its queue order), then a
 * cluster-wide seat of the same lane (shared or the provider's own; lane-seats.ts), so the concurrency cap holds for
 * the whole cluster; each model request takes its start of the rate locally, then cluster-wide. The seats of a
 * worker that died come back when their lease runs out.
 */
export function createClusterLane(
  local: GlobalLane,
  options: Pick<GlobalLaneOptions, 'concurrency' | 'rate' | 'perProvider'>,
  deps: ClusterLaneDeps,
): GlobalLane {
  const seats = createSeatsByLane(deps);
  const shared: LaneLimits = { concurrency: options.concurrency ?? 8, rate: options.rate };
  const laneOf = (provider: string | undefined): { name: string; limits: LaneLimits } => {
    const own = provider === undefined ? undefined : options.perProvider?.[provider];
    if (own === undefined || provider === undefined) return { name: 'global', limits: shared };
    return { name: provider, limits: { concurrency: own.concurrency ?? shared.concurrency, rate: own.rate } };
  };
  return {
    run<T>(task: () => Promise<T>, runOptions: LaneTaskOptions = {}): Promise<T> {
      const { name, limits } = laneOf(runOptions.provider);
      return local.run(() => holdSeat(seats.of(name, limits), task, runOptions.signal), runOptions);
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
    close: () => local.close().finally(() => seats.close()),
    get closed() {
      return local.closed;
    },
  };
}
