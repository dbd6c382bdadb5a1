import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The cluster suites (`npm run test:cluster`, on Postgres): the tests of test/cluster, then the long suite of
 * test/cluster-long (named `*.suite.ts`); the default run leaves both out.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/cluster/**/*.test.ts', 'test/cluster-long/**/*.suite.ts'],
    exclude: [...configDefaults.exclude],
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
  },
});
