import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { createDeferred } from '../../src/core/deferred.js';
import { freshSchema, postgresUrl } from '../support/postgres.js';
import { clusterFixture } from './cluster-fixture.js';

const fixture = clusterFixture(freshSchema());

/**
 * Issue 27: a pool connect timeout under load never ends a worker's process. The cluster's pool (4 connections,
 * 5 s to get one) is exhausted from outside: the table of session owners is locked, so every claim, and the scan
 * for orphaned sessions, holds its connection until the lock goes, and what else needs one (more claims, the
 * lease's renewal, the lane's seats, the requests) times out. Each call settles, a coded error at worst (a claim
 * whose adoption outlived the lease used to wait forever for a claim of its own session); the worker stays up and
 * serves the next call.
 */
describe('a worker whose cluster pool times out under load', { timeout: 120_000 }, () => {
  it('fails the calls that could not get a connection with ledger_unavailable, and lives on', async () => {
    const worker = await fixture.start('a');
    await worker.call('warm', 'send', { id: 'warm-m', text: 'hi' });

    const locker = new pg.Client({
      connectionString: postgresUrl,
      options: `-c search_path=${fixture.schema}`,
    });
    await locker.connect();
    const firstFailure = createDeferred<void>();
    let settled: Promise<PromiseSettledResult<unknown>[]>;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE cluster_owners IN ACCESS EXCLUSIVE MODE');
      const sends = Array.from({ length: 10 }, (_, index) =>
        worker
          .call(`load-${index}`, 'send', { id: `load-${index}-m`, text: 'hi' })
          .catch((error: unknown) => {
            firstFailure.resolve();
            throw error;
          }),
      );
      settled = Promise.allSettled(sends);
      // Held until a call failed for want of a connection: the pool was exhausted for at least its timeout.
      await firstFailure.promise;
      await locker.query('COMMIT');
    } finally {
      await locker.end();
    }
    const outcomes = await settled;

    // Every call settled: stored, or refused with a code (no connection in time; or its session's fence, when the
    // lease ran out while its renewal waited for a connection too).
    const codes = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected'
        ? [isRuntimeError(outcome.reason) ? outcome.reason.code : String(outcome.reason)]
        : [],
    );
    expect(codes).toContain('ledger_unavailable');
    expect(codes.filter((code) => code !== 'ledger_unavailable' && code !== 'fenced')).toEqual([]);
    // The process is alive and claims a session again (an unhandled rejection would have ended it).
    expect(worker.process.exitCode).toBeNull();
    await expect(worker.call('after', 'send', { id: 'after-m', text: 'hi' })).resolves.toBeDefined();
    expect(fixture.log.join('')).not.toMatch(/unhandled/iu);
  });
});
