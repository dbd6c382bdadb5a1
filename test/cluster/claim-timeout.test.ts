import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { createDeferred } from '../../src/core/deferred.js';
import { openClusterDatabase, type ClusterDatabase } from '../../src/cluster/cluster-db.js';
import { claimSession } from '../../src/cluster/session-owners.js';
import { freshPostgresLedger, freshSchema, postgresUrl } from '../support/postgres.js';

/**
 * A claim that cannot get a connection in time (the pool exhausted under load) fails with a coded RuntimeError
 * its caller can retry, not with pg-pool's bare Error, and nothing of it escapes as an unhandled rejection.
 */
describe('claiming a session while the cluster pool is exhausted', () => {
  const escaped: unknown[] = [];
  const record = (reason: unknown): void => void escaped.push(reason);
  let database: ClusterDatabase;
  beforeEach(async () => {
    escaped.length = 0;
    process.on('unhandledRejection', record);
    const schema = freshSchema();
    // The ledger's tables first: a claim moves the session's epoch in them.
    const ledger = freshPostgresLedger({ schema });
    await ledger.ready();
    await ledger.close();
    database = await openClusterDatabase({
      connectionString: postgresUrl,
      schema,
      poolSize: 1,
      connectTimeoutMs: 100,
    });
  });
  afterEach(async () => {
    await database.close();
    process.off('unhandledRejection', record);
  });

  it('rejects the claim with ledger_unavailable, and the next claim succeeds once a connection is free', async () => {
    const holding = createDeferred<void>();
    const busy = createDeferred<void>();
    const held = database.transaction(async () => {
      busy.resolve();
      await holding.promise;
    });
    await busy.promise;

    let failure: unknown;
    try {
      failure = await claimSession(database, 'support:1', 'worker_a').then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      holding.resolve();
      await held;
    }
    expect(isRuntimeError(failure) ? failure.code : failure).toBe('ledger_unavailable');

    await expect(claimSession(database, 'support:1', 'worker_a')).resolves.toEqual({ mine: true, epoch: 1 });
    // A rejection the claim left behind would be reported by the time a later turn ran.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(escaped).toEqual([]);
  });
});
