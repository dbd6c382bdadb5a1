/** Runtime behaviour suites on the Postgres ledger, part c (events, durability, plans, restarts): see postgres-suites-a.test.ts. */
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

await import('./events.test.js');
await import('./publish-when-true.test.js');
await import('./event-consumers.test.js');
await import('./stalled-consumer.test.js');
await import('./run-commit.test.js');
await import('./resume-durability.test.js');
await import('./paused-runs-restart.test.js');
await import('./plans.test.js');
await import('./plan-durability.test.js');
await import('./plan-pause-holds-session.test.js');
await import('./fork.test.js');
await import('./recovery.test.js');
await import('./option-bounds.test.js');
