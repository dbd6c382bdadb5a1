import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDeferred, type Deferred } from '../../src/core/deferred.js';
import type { FakeClock } from '../../src/core/fake-clock.js';
import type { Clock } from '../../src/core/clock.js';
import type { ClusterDatabase, ClusterQuery } from '../../src/cluster/cluster-db.js';
import type { Doorbell } from '../../src/cluster/doorbell.js';
import { forwardRequest, serveRequests, type RequestDeps } from '../../src/cluster/requests.js';
import { openTestCluster } from './cluster-database.js';

const fallbackMs = 3_000;
const owner = 'worker_owner';
const caller = 'worker_caller';

/** The statements a side ran, by what they do, and a deferred per text fragment that resolves once one ran. */
function counted(database: ClusterDatabase) {
  const texts: string[] = [];
  const watched = new Map<string, Deferred<void>>();
  const query: ClusterQuery = async (text, values) => {
    const result = await database.query(text, values);
    texts.push(text);
    for (const [fragment, deferred] of watched) if (text.includes(fragment)) deferred.resolve();
    return result as never;
  };
  return {
    database: { ...database, query },
    count: (fragment: string) => texts.filter((text) => text.includes(fragment)).length,
    total: () => texts.length,
    ran(fragment: string): Promise<void> {
      const deferred = createDeferred<void>();
      watched.set(fragment, deferred);
      return deferred.promise;
    },
  };
}

/** A clock that tells when a timer of `ms` was armed. */
function armedAt(clock: Clock, ms: number): { clock: Clock; armed: Promise<void> } {
  const armed = createDeferred<void>();
  return {
    armed: armed.promise,
    clock: {
      now: () => clock.now(),
      clearTimeout: (handle) => clock.clearTimeout(handle),
      sleep: (wait, signal) => clock.sleep(wait, signal),
      setTimeout(callback, wait) {
        if (wait === ms) armed.resolve();
        return clock.setTimeout(callback, wait);
      },
    },
  };
}

const deafDoorbell: Doorbell = {
  on: () => () => undefined,
  ring: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

describe('forwardRequest', () => {
  let database: ClusterDatabase;
  let doorbell: Doorbell;
  let clock: FakeClock;
  beforeEach(async () => {
    ({ database, doorbell, clock } = await openTestCluster());
    await database.query(
      `INSERT INTO cluster_workers (worker_id, started_at, lease_until) VALUES ($1, 0, 9e15), ($2, 0, 9e15)`,
      [owner, caller],
    );
  });
  afterEach(async () => {
    await doorbell.close();
    await database.close();
  });

  const sides = (callerDoorbell: Doorbell) => {
    const callerSide = counted(database);
    const ownerSide = counted(database);
    const timed = armedAt(clock, fallbackMs);
    const deps = (side: ReturnType<typeof counted>, id: string, bell: Doorbell): RequestDeps => ({
      database: side.database,
      doorbell: bell,
      clock: timed.clock,
      pollMs: 100,
      fallbackMs,
      workerId: () => id,
    });
    return {
      callerSide,
      ownerSide,
      armed: timed.armed,
      callerDeps: deps(callerSide, caller, callerDoorbell),
      ownerDeps: deps(ownerSide, owner, doorbell),
    };
  };
  const request = { sessionKey: 'chat:1', kind: 'send', payload: { text: 'hi' } };

  it('takes the answer at its ring in two statements of the caller, with no poll and no timer fired', async () => {
    const { callerSide, callerDeps, ownerDeps } = sides(doorbell);
    const asked = createDeferred<void>();
    const off = doorbell.on(`request:${owner}`, () => asked.resolve());
    const forwarded = forwardRequest(callerDeps, owner, request);
    await asked.promise;
    off();
    const served: unknown[] = [];
    const taken = await serveRequests(
      ownerDeps,
      (given) => {
        served.push(given.payload);
        return Promise.resolve({ value: 42 });
      },
      (error) => {
        throw error;
      },
    );

    await expect(forwarded).resolves.toEqual({ value: 42 });
    expect(taken).toBe(1);
    expect(served).toEqual([{ text: 'hi' }]);
    // The request with its ring, then the answer taken once: no read of the row and no check of the owner's lease.
    expect(callerSide.total()).toBe(2);
    expect(callerSide.count(`status = 'answered' RETURNING answer`)).toBe(1);
    expect(callerSide.count('cluster_workers')).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    const left = await database.query('SELECT id FROM cluster_requests');
    expect(left.rowCount).toBe(0);
  });

  it('reads the answer at the fallback poll when its ring was lost, and not before', async () => {
    const { callerSide, ownerSide, callerDeps, ownerDeps, armed } = sides(deafDoorbell);
    const forwarded = forwardRequest(callerDeps, owner, request);
    await armed;
    const answered = ownerSide.ran("status = 'answered', answer");
    await serveRequests(
      ownerDeps,
      () => Promise.resolve({ value: 'late' }),
      (error) => {
        throw error;
      },
    );
    await answered;
    expect(callerSide.count('RETURNING answer')).toBe(0);

    await clock.advance(fallbackMs);

    await expect(forwarded).resolves.toEqual({ value: 'late' });
    expect(callerSide.count('RETURNING answer')).toBe(1);
    expect(callerSide.total()).toBe(2);
  });

  it('withdraws the request at the fallback poll once the owner lease ran out', async () => {
    const { callerSide, callerDeps, armed } = sides(doorbell);
    const forwarded = forwardRequest(callerDeps, owner, request);
    await armed;
    await database.query('UPDATE cluster_workers SET lease_until = 0 WHERE worker_id = $1', [owner]);

    await clock.advance(fallbackMs);

    await expect(forwarded).resolves.toBeUndefined();
    expect(callerSide.count('cluster_workers')).toBe(1);
    const left = await database.query('SELECT id FROM cluster_requests');
    expect(left.rowCount).toBe(0);
  });
});
