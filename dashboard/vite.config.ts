import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * Builds the dashboard page into dist/dashboard: one HTML file and hashed assets served under `/dashboard/`
 * by `mountDashboard` (src/server/dashboard). Everything is bundled: the page loads nothing from a CDN.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
  },
});
