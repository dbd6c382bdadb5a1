import { createDeferred } from '../../src/core/deferred.js';
import { fakeClock, type FakeClock } from '../../src/core/fake-clock.js';
import { openClusterDatabase, type ClusterDatabase } from '../../src/cluster/cluster-db.js';
import { openDoorbell, type Doorbell } from '../../src/cluster/doorbell.js';
import { freshPostgresLedger, freshSchema, postgresUrl } from '../support/postgres.js';

/** One test's cluster tables on Postgres: their database, a doorbell that already listens, a fake clock at 0. */
export interface TestCluster {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly clock: FakeClock;
}

/** Resolves once the doorbell listens (it wakes every listener when its LISTEN is in place). */
function listening(doorbell: Doorbell): Promise<void> {
  const heard = createDeferred<void>();
  const off = doorbell.on('probe', () => heard.resolve());
  return heard.promise.finally(off);
}

/** A fresh schema migrated by the Postgres ledger, the cluster database on it, and its doorbell listening. */
export async function openTestCluster(): Promise<TestCluster> {
  const schema = freshSchema();
  const ledger = freshPostgresLedger({ schema });
  await ledger.ready();
  await ledger.close();
  const database = await openClusterDatabase({ connectionString: postgresUrl, schema });
  const clock = fakeClock({ now: 0 });
  const doorbell = openDoorbell(database, clock, (error) => {
    throw error;
  });
  await listening(doorbell);
  return { database, doorbell, clock };
}
