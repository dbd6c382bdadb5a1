import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/** The crash suites (`npm run test:crash`): test/crash and test/crash-mixed, which the default run leaves out. */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/crash/**/*.test.ts', 'test/crash-mixed/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    testTimeout: 420_000,
  },
});
