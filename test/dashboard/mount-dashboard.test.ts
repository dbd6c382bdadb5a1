import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type Runtime } from 'agentlanes';
import { createServer, type ServerOptions } from 'agentlanes/server';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { buildDashboardPage } from './support/build-page.js';

const token = 'dashboard-mount-token-0123456789';
let assetsDir: string;
let emptyDir: string;
let runtime: Runtime;

beforeAll(async () => {
  assetsDir = await buildDashboardPage();
  emptyDir = mkdtempSync(join(tmpdir(), 'agentlanes-dashboard-empty-'));
  const clock = fakeClock({ now: 0 });
  runtime = createRuntime({
    ledger: createMemoryLedger(),
    providers: { scripted: scriptedModel([], { clock }) },
    model: { provider: 'scripted', model: 'm' },
    clock,
  });
}, 60_000);
afterAll(async () => {
  await runtime.close();
  rmSync(assetsDir, { recursive: true, force: true });
  rmSync(emptyDir, { recursive: true, force: true });
});

function appWith(dashboard: ServerOptions['dashboard']) {
  return createServer(runtime, { auth: { tokens: [{ token }] }, dashboard }).app;
}

describe('mountDashboard', () => {
  it('serves the page and its bundled assets without a token, while the data stays behind it', async () => {
    const app = appWith({ assetsDir });
    const page = await app.request('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    const html = await page.text();
    expect(html).toContain('<div id="app">');
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await app.request(script ?? '');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
    // Offline: the bundle names no other host to load from.
    expect(await asset.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\/[^"'`\s]*\.(js|css)/i);
    expect((await app.request('/v1/stats')).status).toBe(401);
    expect((await app.request('/v1/stats', { headers: { authorization: `Bearer ${token}` } })).status).toBe(
      200,
    );
  });

  it('answers only files of the build: unknown and escaping paths are not found', async () => {
    const app = appWith({ assetsDir });
    const built = readdirSync(join(assetsDir, 'assets'));
    expect(built.some((name) => name.endsWith('.css'))).toBe(true);
    expect((await app.request('/dashboard/assets/missing.js')).status).toBe(404);
    expect((await app.request('/dashboard/..%2f..%2fpackage.json')).status).toBe(404);
    expect((await app.request('/dashboard/../../package.json')).status).not.toBe(200);
  });

  it('says how to build the page when the build is missing', async () => {
    const response = await appWith({ assetsDir: emptyDir }).request('/');
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('npm run build');
  });

  it('leaves the page out with dashboard: false (then / is an API path like any other)', async () => {
    expect((await appWith(false).request('/')).status).toBe(401);
  });
});
