/** Runtime behaviour suites on the Postgres ledger, part b (runs, tools, providers): see postgres-suites-a.test.ts. */
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

await import('./run-control.test.js');
await import('./run-close-tied.test.js');
await import('./storable-output.test.js');
await import('./approvals.test.js');
await import('./approvals-restart.test.js');
await import('./deferred-tools.test.js');
await import('./tool-execution.test.js');
await import('./tool-policy.test.js');
await import('./one-tool-executor.test.js');
await import('./undo.test.js');
await import('./failover.test.js');
await import('./rate-limit-wait.test.js');
await import('./transient-retries.test.js');
await import('./cooldown-ladders.test.js');
await import('./auth-profiles-store.test.js');
await import('./missing-secret.test.js');
await import('./secret-scrub.test.js');
await import('./compaction.test.js');
await import('./subagents.test.js');
await import('./attachments.test.js');
await import('./attachments-wire.test.js');
