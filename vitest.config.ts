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
      agentlanes: fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // The long crash suite runs on its own: `npm run test:crash` (test/crash-mixed/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/crash-mixed/mixed-crash.test.ts'],
    testTimeout: 20_000,
  },
});
