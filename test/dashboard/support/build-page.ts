import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

/** The dashboard's Vite config, the one `npm run build` uses. */
export const dashboardConfig = fileURLToPath(new URL('../../../dashboard/vite.config.ts', import.meta.url));

/** Build the dashboard page with Vite's build API into a fresh temporary folder; resolves that folder. */
export async function buildDashboardPage(): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'agentlanes-dashboard-'));
  await build({ configFile: dashboardConfig, logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  return outDir;
}
