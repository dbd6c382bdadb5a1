import { abortReason, type Clock, type TimerHandle } from '../core/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { doorbellChannel, nowMs } from './cluster-schema.js';
import type { Doorbell } from './doorbell.js';

/**
 * A lane's cluster-wide concurrency as seats: `concurrency` rows of `cluster_lane_seats`, each free or leased to a
 * worker until a time of the database's clock. A worker leases seats in one statement and hands them to its runs
 * itself: a run that ends gives its seat to the next local run while the seat's share period lasts; a seat no run
 * needs stays until the period ends, or goes back at once when another worker rang that it wants one. A seat in
 * use is renewed with the others in one statement per `renewMs`; a worker that dies gives its seats back when
 * their lease runs out, at most `leaseMs` after it last leased or renewed them.
 */
export interface LaneSeats {
  /** Wait for a seat (rejects when `signal` aborts); resolves the function that gives it back. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Give back every seat this worker holds that no run uses, and stop renewing. */
  close(): Promise<void>;
}

/** The timing of a lane's seats. */
export interface SeatTiming {
  /** A seat's lease on the database: how long a dead worker's seats stay taken. */
  readonly leaseMs: number;
  /** How often the seats in use are renewed; also a seat's share period (how long it is handed out locally). */
  readonly renewMs: number;
  /** How often a worker waiting for a seat asks again when no ring woke it. */
  readonly pollMs: number;
}

/** What the seats of one lane need. */
export interface LaneSeatsDeps {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly clock: Clock;
  readonly timing: SeatTiming;
  readonly workerId: () => string;
  readonly onError: (error: unknown) => void;
}

/** A seat this worker leased: until when it may hand it out, and whether a run uses it. */
interface Seat {
  readonly number: number;
  readonly handOutUntil: number;
  inUse: boolean;
}

interface Waiter {
  readonly give: (release: () => void) => void;
}

const seatStatements = {
  seed: `INSERT INTO cluster_lane_seats (lane, seat, worker_id, held_until)
     SELECT $1, generate_series(0, $2 - 1), NULL, 0 ON CONFLICT DO NOTHING`,
  // Up to $3 free seats below the cap; when fewer were free, a ring tells the holders this worker wants one.
  take: `WITH free AS (
       SELECT seat FROM cluster_lane_seats WHERE lane = $1 AND seat < $2 AND held_until <= ${nowMs}
       ORDER BY seat LIMIT $3 FOR UPDATE SKIP LOCKED),
     taken AS (
       UPDATE cluster_lane_seats s SET worker_id = $4, held_until = ${nowMs} + $5
       FROM free WHERE s.lane = $1 AND s.seat = free.seat RETURNING s.seat)
     SELECT coalesce((SELECT array_agg(seat) FROM taken), '{}') AS seats,
       (SELECT count(*) FROM (SELECT pg_notify($6, $7) WHERE (SELECT count(*) FROM taken) < $3) wanted) AS wanted`,
  renew: `UPDATE cluster_lane_seats SET held_until = ${nowMs} + $4
     WHERE lane = $1 AND worker_id = $2 AND seat = ANY($3) RETURNING seat`,
  give: `WITH given AS (
       UPDATE cluster_lane_seats SET worker_id = NULL, held_until = 0
       WHERE lane = $1 AND worker_id = $2 AND seat = ANY($3) RETURNING seat)
     SELECT count(*) FROM (SELECT pg_notify($4, $5) WHERE EXISTS (SELECT 1 FROM given)) rang`,
};

/** The ring that tells waiting workers seats of `lane` were given back, and the one that says a worker wants one. */
export function seatRings(lane: string): { readonly freed: string; readonly wanted: string } {
  return { freed: `lane:${lane}`, wanted: `lane-wanted:${lane}` };
}

/** One lane's seats as this worker holds them. */
interface Pool {
  readonly deps: LaneSeatsDeps;
  readonly lane: string;
  readonly concurrency: number;
  readonly rings: { readonly freed: string; readonly wanted: string };
  readonly held: Map<number, Seat>;
  readonly waiters: Waiter[];
  /** The worker id the seats were leased under (a new incarnation holds none of them). */
  owner: string;
  seeded: boolean;
  taking: boolean;
  closed: boolean;
  renewTimer: TimerHandle;
  sweepTimer: TimerHandle;
  giving: number[];
}

/** Seats leased by an earlier incarnation of this worker are not this one's (their lease runs out). */
function sameOwner(pool: Pool): void {
  if (pool.owner === pool.deps.workerId()) return;
  pool.owner = pool.deps.workerId();
  pool.held.clear();
}

function idleSeats(pool: Pool): number[] {
  return [...pool.held.values()].filter((seat) => !seat.inUse).map((seat) => seat.number);
}

/** The function a run calls to give its seat back: to the next waiter here, or idle, or to the cluster. */
function releaseOf(pool: Pool, seat: Seat): () => void {
  return () => {
    if (pool.held.get(seat.number) !== seat || !seat.inUse) return;
    seat.inUse = false;
    handOut(pool, seat);
  };
}

/** Give `seat` to the first waiter while its period lasts; else keep it idle (in period) or give it back. */
function handOut(pool: Pool, seat: Seat): void {
  const current = pool.deps.clock.now() < seat.handOutUntil;
  const waiter = current ? pool.waiters.shift() : undefined;
  if (waiter !== undefined) {
    seat.inUse = true;
    waiter.give(releaseOf(pool, seat));
    return;
  }
  if (!current || pool.closed) giveBack(pool, [seat.number]);
  else armSweep(pool);
  if (pool.waiters.length > 0) void take(pool);
}

/** Give seats back to the cluster: the seats of one microtask in one statement, which rings the waiting workers. */
function giveBack(pool: Pool, numbers: readonly number[]): void {
  if (numbers.length === 0) return;
  for (const number of numbers) pool.held.delete(number);
  if (pool.giving.length === 0) queueMicrotask(() => void flushGiving(pool));
  pool.giving.push(...numbers);
}

function flushGiving(pool: Pool): Promise<void> {
  const numbers = pool.giving;
  pool.giving = [];
  if (numbers.length === 0) return Promise.resolve();
  const { lane, owner, rings } = pool;
  return pool.deps.database
    .query(seatStatements.give, [lane, owner, numbers, doorbellChannel, rings.freed])
    .then(() => undefined, pool.deps.onError);
}

/** At the end of the earliest period of an idle seat, give back the idle seats whose period ended. */
function armSweep(pool: Pool): void {
  const { clock } = pool.deps;
  if (pool.sweepTimer !== undefined) return;
  const ends = [...pool.held.values()].filter((seat) => !seat.inUse).map((seat) => seat.handOutUntil);
  if (ends.length === 0) return;
  const sweep = (): void => {
    pool.sweepTimer = undefined;
    const now = clock.now();
    giveBack(
      pool,
      idleSeats(pool).filter((number) => (pool.held.get(number)?.handOutUntil ?? 0) <= now),
    );
    armSweep(pool);
  };
  pool.sweepTimer = clock.setTimeout(sweep, Math.max(0, Math.min(...ends) - clock.now()));
}

function armRenew(pool: Pool): void {
  const { clock, timing } = pool.deps;
  if (pool.renewTimer !== undefined || pool.closed) return;
  pool.renewTimer = clock.setTimeout(() => {
    pool.renewTimer = undefined;
    void renew(pool).finally(() => {
      if (pool.held.size > 0) armRenew(pool);
    });
  }, timing.renewMs);
}

/** Renew the seats in use; one the database no longer names this worker's is forgotten (its lease ran out). */
async function renew(pool: Pool): Promise<void> {
  sameOwner(pool);
  const using = [...pool.held.values()].filter((seat) => seat.inUse).map((seat) => seat.number);
  if (using.length === 0) return;
  try {
    const { rows } = await pool.deps.database.query<{ seat: number }>(seatStatements.renew, [
      pool.lane,
      pool.owner,
      using,
      pool.deps.timing.leaseMs,
    ]);
    const kept = new Set(rows.map((row) => row.seat));
    for (const number of using) if (!kept.has(number)) pool.held.delete(number);
  } catch (error) {
    pool.deps.onError(error);
  }
}

/** Lease as many seats as there are waiters and hand them out; asked again at a ring of freed seats or a poll. */
async function take(pool: Pool): Promise<void> {
  if (pool.taking || pool.closed) return;
  pool.taking = true;
  try {
    while (pool.waiters.length > 0 && !pool.closed) {
      sameOwner(pool);
      // Listening before the statement: a ring that comes while it runs (seats freed after it looked) is not lost.
      const freed = watchFreed(pool);
      try {
        if (await takeOnce(pool)) continue;
        await freed.wait();
      } finally {
        freed.stop();
      }
    }
  } catch (error) {
    pool.deps.onError(error);
  } finally {
    pool.taking = false;
  }
}

/** One statement that leases free seats (the lane's rows are created first, once); true when it got any. */
async function takeOnce(pool: Pool): Promise<boolean> {
  const { database, clock, timing } = pool.deps;
  if (!pool.seeded) {
    await database.query(seatStatements.seed, [pool.lane, pool.concurrency]);
    pool.seeded = true;
  }
  const sentAt = clock.now();
  const { rows } = await database.query<{ seats: number[] }>(seatStatements.take, [
    pool.lane,
    pool.concurrency,
    pool.waiters.length,
    pool.owner,
    timing.leaseMs,
    doorbellChannel,
    pool.rings.wanted,
  ]);
  const numbers = rows[0]?.seats ?? [];
  for (const number of numbers) {
    const seat: Seat = { number, handOutUntil: sentAt + timing.renewMs, inUse: false };
    pool.held.set(number, seat);
    handOut(pool, seat);
  }
  if (numbers.length > 0) armRenew(pool);
  return numbers.length > 0;
}

/**
 * Watch for seats given back somewhere (a ring) from now: `wait` resolves at once when one rang since, else at the
 * next ring or after `pollMs`.
 */
function watchFreed(pool: Pool): { readonly wait: () => Promise<void>; readonly stop: () => void } {
  const { clock, doorbell, timing } = pool.deps;
  let rung = false;
  let wake: (() => void) | undefined;
  let timer: TimerHandle;
  const off = doorbell.on(pool.rings.freed, () => {
    rung = true;
    wake?.();
  });
  return {
    wait: () =>
      rung
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            wake = resolve;
            timer = clock.setTimeout(resolve, timing.pollMs);
          }),
    stop: () => {
      off();
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}

/** A seat for a run: an idle one held here at once, else in line for the next one this worker gets. */
function acquire(pool: Pool, signal: AbortSignal | undefined): Promise<() => void> {
  sameOwner(pool);
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const now = pool.deps.clock.now();
  const ready = [...pool.held.values()].find((seat) => !seat.inUse && now < seat.handOutUntil);
  if (ready !== undefined) {
    ready.inUse = true;
    return Promise.resolve(releaseOf(pool, ready));
  }
  return new Promise<() => void>((resolve, reject) => {
    const onAbort = (): void => {
      const index = pool.waiters.indexOf(waiter);
      if (index >= 0) pool.waiters.splice(index, 1);
      reject(abortReason(signal as AbortSignal));
    };
    const waiter: Waiter = {
      give: (release) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      },
    };
    pool.waiters.push(waiter);
    signal?.addEventListener('abort', onAbort, { once: true });
    void take(pool);
  });
}

/** The seats of `lane`, `concurrency` of them across the cluster. */
export function createLaneSeats(deps: LaneSeatsDeps, lane: string, concurrency: number): LaneSeats {
  const pool: Pool = {
    deps,
    lane,
    concurrency,
    rings: seatRings(lane),
    held: new Map(),
    waiters: [],
    owner: deps.workerId(),
    seeded: false,
    taking: false,
    closed: false,
    renewTimer: undefined,
    sweepTimer: undefined,
    giving: [],
  };
  // Another worker waits: the seats no run here uses go back now, not at the end of their period.
  const unwanted = deps.doorbell.on(pool.rings.wanted, () => giveBack(pool, idleSeats(pool)));
  return {
    acquire: (signal) => acquire(pool, signal),
    async close() {
      pool.closed = true;
      unwanted();
      for (const timer of [pool.renewTimer, pool.sweepTimer])
        if (timer !== undefined) deps.clock.clearTimeout(timer);
      const idle = idleSeats(pool);
      for (const number of idle) pool.held.delete(number);
      pool.giving.push(...idle);
      await flushGiving(pool);
    },
  };
}
