/**
 * Runtime behaviour suites on the Postgres ledger: the suites imported at the end run unchanged, with the ledgers they
 * open swapped for Postgres ones (a memory ledger: a fresh schema; a SQLite file: the schema named after its path,
 * so a "restart" on the same path reopens the same data).
 */
import { vi } from 'vitest';

vi.mock('../../src/ledger/memory-ledger.js', async () => {
  const { freshPostgresLedger } = await import('../support/postgres.js');
  return { createMemoryLedger: () => freshPostgresLedger() };
});

vi.mock('../../src/ledger/sqlite-ledger.js', async () => {
  const { freshPostgresLedger, freshSchema } = await import('../support/postgres.js');
  const schemas = new Map<string, string>();
  return {
    createSqliteLedger: (options: { readonly path: string }) => {
      let schema = schemas.get(options.path);
      if (schema === undefined) {
        schema = freshSchema();
        schemas.set(options.path, schema);
      }
      return freshPostgresLedger({ schema });
    },
  };
});

// Suites whose every test waits on the runtime (waitForEnd, restarts) rather than on how many event-loop turns a
// ledger write takes: the harness-based suites (smoke, queue-modes) assert state right after a fake-clock advance,
// which a ledger on a real network round trip has not reached yet; test/runtime/postgres-runtime.test.ts covers
// their behaviour on Postgres with real waits.
await import('./approvals-restart.test.js');
await import('./paused-runs-restart.test.js');
