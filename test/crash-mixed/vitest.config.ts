import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/** The long crash suite (`npm run test:crash`): only test/crash-mixed, which the default run leaves out. */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/crash-mixed/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    testTimeout: 420_000,
  },
});
