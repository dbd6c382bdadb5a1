import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/core/fake-clock.js';
import type { ClusterDatabase, ClusterQuery } from '../../src/cluster/cluster-db.js';
import type { Doorbell } from '../../src/cluster/doorbell.js';
import { createLaneSeats, seatRings, type LaneSeats } from '../../src/cluster/lane-seats.js';
import { createDeferred } from '../../src/core/index.js';
import { openTestCluster } from './cluster-database.js';

const timing = { leaseMs: 10_000, renewMs: 3_000, pollMs: 500 };

/** One worker's seats of lane `global`, with the statements it ran; `answered` may hold back a statement's answer. */
function worker(
  database: ClusterDatabase,
  doorbell: Doorbell,
  clock: FakeClock,
  id: string,
  answered: (text: string) => Promise<void> = () => Promise.resolve(),
) {
  const texts: string[] = [];
  const query: ClusterQuery = async (text, values) => {
    const result = await database.query(text, values);
    texts.push(text);
    await answered(text);
    return result as never;
  };
  const errors: unknown[] = [];
  const seats: LaneSeats = createLaneSeats(
    {
      database: { ...database, query },
      doorbell,
      clock,
      timing,
      workerId: () => id,
      onError: (error) => errors.push(error),
    },
    'global',
    2,
  );
  return { seats, errors, statements: () => texts.length };
}

describe('createLaneSeats', () => {
  let database: ClusterDatabase;
  let doorbell: Doorbell;
  let clock: FakeClock;
  beforeEach(async () => {
    ({ database, doorbell, clock } = await openTestCluster());
  });
  afterEach(async () => {
    await doorbell.close();
    await database.close();
  });

  const holders = async (): Promise<Record<string, number>> => {
    const { rows } = await database.query<{ worker_id: string; seats: number }>(
      `SELECT worker_id, count(*)::int AS seats FROM cluster_lane_seats
       WHERE held_until > (extract(epoch from clock_timestamp()) * 1000)::bigint GROUP BY worker_id`,
    );
    return Object.fromEntries(rows.map((row) => [row.worker_id, row.seats]));
  };

  it('hands a seat from one run to the next on the worker, without a statement, within its period', async () => {
    const a = worker(database, doorbell, clock, 'worker_a');
    for (let run = 0; run < 5; run++) {
      const release = await a.seats.acquire();
      release();
    }
    // The lane's rows once, then one lease; four runs reused the seat.
    expect(a.statements()).toBe(2);
    expect(await holders()).toEqual({ worker_a: 1 });
    await a.seats.close();
    expect(await holders()).toEqual({});
    expect(a.errors).toEqual([]);
  });

  it('keeps the cap across workers: a third run waits until a seat is given back', async () => {
    const a = worker(database, doorbell, clock, 'worker_a');
    const b = worker(database, doorbell, clock, 'worker_b');
    const first = await a.seats.acquire();
    await a.seats.acquire();
    expect(await holders()).toEqual({ worker_a: 2 });
    let third: (() => void) | undefined;
    const waiting = b.seats.acquire().then((release) => (third = release));
    // worker_b's lease came back empty and rang that it wants a seat; worker_a's seats are in use.
    await clock.advance(timing.pollMs);
    expect(third).toBeUndefined();

    // Past its period, worker_a gives a seat back as its run ends (and rings): worker_b takes it.
    await clock.advance(timing.renewMs);
    first();
    await waiting;
    expect(await holders()).toEqual({ worker_a: 1, worker_b: 1 });
    await Promise.all([a.seats.close(), b.seats.close()]);
  });

  it('takes a seat given back while its own lease statement was answered late, without waiting for a poll', async () => {
    const a = worker(database, doorbell, clock, 'worker_a');
    const first = await a.seats.acquire();
    await a.seats.acquire();
    // worker_b's lease statement finds no free seat, and its answer comes only after worker_a gave one back and rang.
    const freedRing = createDeferred<void>();
    const offFreed = doorbell.on(seatRings('global').freed, () => freedRing.resolve());
    let holdNext = true;
    const b = worker(database, doorbell, clock, 'worker_b', async (text) => {
      if (!holdNext || !text.includes('WITH free AS')) return;
      holdNext = false;
      await clock.advance(timing.renewMs);
      first();
      await freedRing.promise;
    });
    const release = await b.seats.acquire();
    offFreed();
    // No poll was needed (the fake clock stood still after the hold): the ring during the statement was heard.
    expect(await holders()).toEqual({ worker_a: 1, worker_b: 1 });
    release();
    await Promise.all([a.seats.close(), b.seats.close()]);
  });

  it('gives an idle seat back at once when another worker rang that it wants one', async () => {
    const a = worker(database, doorbell, clock, 'worker_a');
    const b = worker(database, doorbell, clock, 'worker_b');
    const [one, two] = [await a.seats.acquire(), await a.seats.acquire()];
    one();
    two();
    expect(await holders()).toEqual({ worker_a: 2 });

    // No clock moves: worker_b's ring of want, worker_a's give-back and its ring of freed seats do it all.
    const release = await b.seats.acquire();

    expect(await holders()).toEqual({ worker_b: 1 });
    release();
    await Promise.all([a.seats.close(), b.seats.close()]);
  });

  it('gets back the seats of a worker that died holding them once their lease ran out, and not before', async () => {
    const dead = worker(database, doorbell, clock, 'worker_dead');
    await dead.seats.acquire();
    await dead.seats.acquire();
    const bound = await database.query<{ ahead: number }>(
      `SELECT max(held_until - (extract(epoch from clock_timestamp()) * 1000)::bigint)::int AS ahead
       FROM cluster_lane_seats WHERE worker_id = 'worker_dead'`,
    );
    expect(bound.rows[0]?.ahead).toBeLessThanOrEqual(timing.leaseMs);
    const b = worker(database, doorbell, clock, 'worker_b');
    let got = 0;
    const both = Promise.all([b.seats.acquire(), b.seats.acquire()]).then(() => (got = 2));
    await clock.advance(timing.pollMs);
    expect(got).toBe(0);
    expect(await holders()).toEqual({ worker_dead: 2 });

    // The database's clock passes the dead worker's lease (it never renews nor gives back).
    await database.query(`UPDATE cluster_lane_seats SET held_until = held_until - $1`, [timing.leaseMs]);
    await clock.advance(timing.pollMs);

    await both;
    expect(got).toBe(2);
    expect(await holders()).toEqual({ worker_b: 2 });
    await b.seats.close();
  });

  it('renews the seats in use each renewMs, so a long run keeps its seat past the first lease', async () => {
    const a = worker(database, doorbell, clock, 'worker_a');
    const release = await a.seats.acquire();
    // Moved 5 s back, so the renewal's new deadline is later whatever the database's clock did meanwhile.
    const before = await database.query<{ held_until: number }>(
      `UPDATE cluster_lane_seats SET held_until = held_until - 5000 WHERE worker_id = 'worker_a'
       RETURNING held_until`,
    );
    await clock.advance(timing.renewMs);
    const after = await database.query<{ held_until: number }>(
      `SELECT held_until FROM cluster_lane_seats WHERE worker_id = 'worker_a'`,
    );
    expect(Number(after.rows[0]?.held_until)).toBeGreaterThan(Number(before.rows[0]?.held_until));
    expect(a.statements()).toBe(3);
    release();
    await a.seats.close();
  });
});
