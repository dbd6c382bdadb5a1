import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      // Tests import the package the way users do; point those imports at the sources.
      'agentlanes/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      'agentlanes/server': fileURLToPath(new URL('./src/server/index.ts', import.meta.url)),
      'agentlanes/grammy': fileURLToPath(new URL('./src/adapters/grammy/index.ts', import.meta.url)),
      'agentlanes/chat-sdk': fileURLToPath(new URL('./src/adapters/chat-sdk/index.ts', import.meta.url)),
      'agentlanes/openai': fileURLToPath(new URL('./src/providers/openai/index.ts', import.meta.url)),
      'agentlanes/anthropic': fileURLToPath(new URL('./src/providers/anthropic/index.ts', import.meta.url)),
      'agentlanes/ai-sdk': fileURLToPath(new URL('./src/providers/ai-sdk/index.ts', import.meta.url)),
      'agentlanes/otel': fileURLToPath(new URL('./src/telemetry/index.ts', import.meta.url)),
      'agentlanes/mcp': fileURLToPath(new URL('./src/tools/mcp/index.ts', import.meta.url)),
      'agentlanes/ledger': fileURLToPath(new URL('./src/public/ledger.ts', import.meta.url)),
      'agentlanes/providers': fileURLToPath(new URL('./src/public/providers.ts', import.meta.url)),
      'agentlanes/plans': fileURLToPath(new URL('./src/public/plans.ts', import.meta.url)),
      'agentlanes/attachments': fileURLToPath(new URL('./src/public/attachments.ts', import.meta.url)),
      'agentlanes/authority': fileURLToPath(new URL('./src/public/authority.ts', import.meta.url)),
      'agentlanes/events': fileURLToPath(new URL('./src/public/events.ts', import.meta.url)),
      'agentlanes/queue': fileURLToPath(new URL('./src/public/queue.ts', import.meta.url)),
      'agentlanes/clock': fileURLToPath(new URL('./src/public/clock.ts', import.meta.url)),
      agentlanes: fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // The suites of killed and stopped child processes run on their own, so `npm test` stays under 6 minutes:
    // `npm run test:crash` (test/crash and test/crash-mixed) and `npm run test:cluster` (test/cluster and
    // test/cluster-long, on Postgres).
    exclude: [...configDefaults.exclude, 'test/crash/**', 'test/crash-mixed/**', 'test/cluster/**'],
    // One PostgreSQL server and database for the run: the configured one, the machine's, or an embedded one.
    globalSetup: ['test/support/postgres-global-setup.ts'],
    // Budgets that guard a hang, generous so that no pass depends on a quiet machine; none measures speed.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
