import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type Runtime } from 'agentlanes';
import { createServer } from 'agentlanes/server';
import { fakeClock, scriptedModel, type FakeClock } from 'agentlanes/testing';
import { launchChromium } from './support/browser.js';
import { buildDashboardPage } from './support/build-page.js';

const token = 'dashboard-scale-token-0123456789';
const sessionCount = 10_000;

interface Context {
  browser: Browser;
  page: Page;
  url: string;
  runtime: Runtime;
  clock: FakeClock;
  close(): Promise<void>;
}

function keyOf(index: number): string {
  return `load:${String(index).padStart(5, '0')}`;
}

async function start(): Promise<Context> {
  const assetsDir = await buildDashboardPage();
  const clock = fakeClock({ now: Date.UTC(2026, 0, 5, 9, 30) });
  const runtime = createRuntime({
    ledger: createMemoryLedger(),
    providers: { scripted: scriptedModel(() => ({ text: 'ok' }), { clock }) },
    model: { provider: 'scripted', model: 'm' },
    clock,
  });
  // Storing a settings override makes each session a real, stored session without running a model.
  for (let index = 0; index < sessionCount; index += 1) {
    await runtime.session(keyOf(index)).configure({ mode: index % 2 === 0 ? 'followup' : 'collect' });
  }
  const server = createServer(runtime, { auth: { tokens: [{ token }] }, clock, dashboard: { assetsDir } });
  const listening = await server.listen({ port: 0 });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  return {
    browser,
    page,
    url: listening.url,
    runtime,
    clock,
    async close() {
      await browser.close();
      await listening.close();
      const closing = runtime.close({ timeoutMs: 1000 });
      await clock.runAll();
      await closing;
      rmSync(assetsDir, { recursive: true, force: true });
    },
  };
}

let context: Context;
beforeAll(async () => {
  context = await start();
}, 120_000);
afterAll(async () => {
  await context?.close();
});

/** Run a page action and time it in the page until `done` (a JS expression) holds; resolves milliseconds. */
async function timeInPage(page: Page, action: string, done: string): Promise<number> {
  return page.evaluate<number>(`(async () => {
    const started = performance.now();
    ${action};
    await new Promise((resolve) => {
      const check = () => (${done}) ? resolve() : requestAnimationFrame(check);
      check();
    });
    return performance.now() - started;
  })()`);
}

const countText = `document.querySelector('[data-testid="sessions-count"]').textContent`;
const renderedRows = 'document.querySelectorAll("tbody tr[data-key]").length';

describe('the sessions table with 10,000 sessions', () => {
  it('loads every session, renders only the rows in view, and filters, sorts and scrolls them', async () => {
    const { page, url } = context;
    await page.goto(url);
    await page.evaluate(`sessionStorage.setItem('agentlanes.token', ${JSON.stringify(token)})`);
    const loadStarted = Date.now();
    await page.reload();
    const count = page.locator('[data-testid="sessions-count"]');
    await expect
      .poll(() => count.textContent(), { timeout: 60_000, interval: 100 })
      .toContain('10,000 of 10,000 sessions · loaded in');
    const loadWallMs = Date.now() - loadStarted;
    const loadText = (await count.textContent()) ?? '';
    const rendered = await page.evaluate<number>(renderedRows);
    // Virtualised: a screenful of rows (plus overscan) exists in the DOM, not 10,000.
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(60);

    const setFilter = (value: string) => `(() => {
      const input = document.querySelector('input[type="search"]');
      input.value = ${JSON.stringify(value)};
      input.dispatchEvent(new Event('input', { bubbles: true }));
    })()`;
    const filterMs = await timeInPage(
      page,
      setFilter('load:0999'),
      `${countText}.startsWith('10 of 10,000')`,
    );
    const unfilterMs = await timeInPage(page, setFilter(''), `${countText}.startsWith('10,000 of 10,000')`);
    const sortMs = await timeInPage(
      page,
      `[...document.querySelectorAll('thead button')].find((b) => b.textContent === 'Session').click()`,
      `document.querySelector('tbody th button')?.textContent.trim() === 'load:00000'`,
    );
    const scrollMs = await timeInPage(
      page,
      `(() => { const s = document.querySelector('.scroller'); s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); })()`,
      `document.querySelector('tr[data-key="load:09999"]') !== null`,
    );
    expect(await page.evaluate<number>(renderedRows)).toBeLessThan(60);

    // The server's share of the load: the same pages read straight from the API.
    const apiStarted = Date.now();
    let after: string | undefined;
    let listed = 0;
    do {
      const query = new URLSearchParams({ limit: '500', ...(after === undefined ? {} : { after }) });
      const response = await fetch(`${url}/v1/sessions?${query.toString()}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const page = (await response.json()) as { sessions: unknown[]; next?: string };
      listed += page.sessions.length;
      after = page.next;
    } while (after !== undefined);
    const apiMs = Date.now() - apiStarted;
    expect(listed).toBe(sessionCount);

    // A message to one of them still shows up live at the top of the most-recent-first order.
    await page.getByRole('button', { name: 'Last activity' }).click();
    await page.evaluate(`document.querySelector('.scroller').scrollTop = 0`);
    await context.clock.advance(1000);
    const sent = await fetch(`${url}/v1/sessions/load:04242/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hello' }),
    });
    expect(sent.status).toBe(202);
    await expect
      .poll(() => page.locator('tbody th button').first().textContent(), { timeout: 10_000 })
      .toContain('load:04242');

    console.log(
      `dashboard with ${sessionCount} sessions: ${loadText.trim()} (page load to full table ${loadWallMs} ms; ` +
        `the same ${sessionCount / 500} pages read by fetch alone: ${apiMs} ms); ` +
        `rows in the DOM ${rendered}; filter ${filterMs.toFixed(0)} ms, clear filter ${unfilterMs.toFixed(0)} ms, ` +
        `sort by key ${sortMs.toFixed(0)} ms, scroll to the end ${scrollMs.toFixed(0)} ms`,
    );
  }, 120_000);
});
