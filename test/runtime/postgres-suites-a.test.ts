/**
 * Runtime behaviour suites on the Postgres ledger, part a (messages in: admission, queue modes, sessions); parts b
 * (runs, tools, providers) and c (events, durability, plans, restarts) split the rest so vitest runs them in
 * parallel. The suites imported at the end run unchanged; the mocks swap what they open (see
 * test/support/postgres-suite-mocks.ts): a memory ledger becomes a Postgres one on a fresh schema, a SQLite file the
 * schema named after its path (a "restart" on the same path reopens the same data), and the fake clock waits, before
 * each timer and at the end of every step, until no ledger call is in flight, as it waits a few event-loop turns for
 * an in-process ledger.
 *
 * Every test/runtime suite runs here but these:
 * - corrupt-rows: damages rows in the SQLite file itself (its Postgres counterpart is the ledger contract suite);
 *   the same holds for the tests split into admission-durability-sqlite, fork-sqlite and recovery-sqlite.
 * - properties: 110 random interleavings, each a runtime stepped through hundreds of due times with a round trip
 *   per step, run past the 20 s test timeout (40 s measured for its two property tests).
 * - options-docs: reads the option schemas and the docs, no ledger.
 * - postgres-runtime, postgres-unreachable: on Postgres already.
 */
import { vi } from 'vitest';

vi.mock('../../src/ledger/memory/ledger.js', async () =>
  (await import('../support/postgres-suite-mocks.js')).postgresMemoryLedgerModule(),
);
vi.mock('../../src/ledger/sqlite/ledger.js', async () =>
  (await import('../support/postgres-suite-mocks.js')).postgresSqliteLedgerModule(),
);
vi.mock('../../src/core/fake-clock.js', async (importOriginal) =>
  (await import('../support/postgres-suite-mocks.js')).settlingFakeClockModule(await importOriginal()),
);

await import('./smoke.test.js');
await import('./queue-modes.test.js');
await import('./collect-timing.test.js');
await import('./cap.test.js');
await import('./steering.test.js');
await import('./hibernation.test.js');
await import('./admission-durability.test.js');
await import('./send-durability.test.js');
await import('./wait-after-send.test.js');
await import('./runtime-queries.test.js');
await import('./block-ids.test.js');
await import('./bad-input.test.js');
