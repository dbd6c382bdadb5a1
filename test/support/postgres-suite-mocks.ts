/**
 * The module replacements that run an existing runtime suite unchanged on Postgres ledgers (see
 * test/runtime/postgres-suites-a.test.ts): each file `vi.mock`s the memory ledger, the SQLite ledger and the fake
 * clock with these. vi.mock must be called in the test file itself (it is hoisted there), hence factories here.
 */
import { afterEach } from 'vitest';
import type * as FakeClockModule from '../../src/core/fake-clock.js';
import type { PostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { freshPostgresLedger, freshSchema } from './postgres.js';
import { settlingClock } from './settling-clock.js';
import { ledgerSettled, trackLedger } from './settling-ledger.js';

const opened: PostgresLedger[] = [];

/** A tracked Postgres ledger on `schema` (a fresh one by default), closed after the test if it is still open. */
function openLedger(schema?: string): PostgresLedger {
  const ledger = freshPostgresLedger(schema === undefined ? {} : { schema });
  opened.push(ledger);
  return trackLedger(ledger);
}

// A memory ledger a test drops without closing costs nothing; a Postgres one holds a connection until closed, and a
// file of a hundred tests would run out of them.
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((ledger) => ledger.close()));
});

/** A memory ledger becomes a Postgres one on a fresh schema. */
export function postgresMemoryLedgerModule() {
  return { createMemoryLedger: () => openLedger() };
}

/**
 * A SQLite file becomes the Postgres schema named after its path, so a "restart" on the same path reopens the same
 * data.
 */
export function postgresSqliteLedgerModule() {
  const schemas = new Map<string, string>();
  return {
    createSqliteLedger: (options: { readonly path: string }) => {
      let schema = schemas.get(options.path);
      if (schema === undefined) {
        schema = freshSchema();
        schemas.set(options.path, schema);
      }
      return openLedger(schema);
    },
  };
}

/** The fake clock, stepping from one due time to the next only once no ledger call is in flight. */
export function settlingFakeClockModule(actual: typeof FakeClockModule): typeof FakeClockModule {
  return {
    ...actual,
    fakeClock: (options) => settlingClock(actual.fakeClock(options), ledgerSettled),
  };
}
