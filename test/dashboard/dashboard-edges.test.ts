import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, token, type Context } from './support/page-fixture.js';

/** How long a poll waits for the page: generous, since it only guards a hang on a loaded machine. */
const patience = { timeout: 20_000 };

let context: Context;
beforeAll(async () => {
  context = await startDashboard();
}, 60_000);
afterAll(async () => {
  await context?.close();
});

async function send(key: string, text: string): Promise<void> {
  const response = await fetch(`${context.url}/v1/sessions/${encodeURIComponent(key)}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  expect(response.status).toBe(202);
}

/** The sizes of an element in the page that the badge test reads (the test compiles without the DOM types). */
interface Measured {
  readonly scrollWidth: number;
  readonly clientWidth: number;
  readonly parentElement: Measured;
  getBoundingClientRect(): { readonly left: number; readonly right: number };
}

/** A new 1280×800 tab already signed in (the token in its sessionStorage), with its console errors collected. */
async function signedInPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await context.browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.addInitScript(`sessionStorage.setItem('agentlanes.token', ${JSON.stringify(token)})`);
  await page.goto(context.url);
  await expect.poll(() => page.getByTestId('sessions-count').textContent(), patience).toContain('loaded in');
  return { page, errors };
}

describe('the dashboard page, opened after traffic', () => {
  it('charts the messages and events recorded before the page opened', async () => {
    await send('edge:hello', 'hello');
    await send('edge:again', 'hello again');
    await context.clock.advance(1000);
    const { page } = await signedInPage();
    try {
      await expect
        .poll(() => page.getByTestId('throughput-chart').getAttribute('aria-label'), patience)
        .toMatch(/: 2 messages and [1-9]\d* events in the last 5 minutes$/);
    } finally {
      await page.close();
    }
  });

  it("shows each session's last activity from the ledger when it happened before the page opened", async () => {
    await context.clock.advance(30_000);
    const { page } = await signedInPage();
    try {
      const lastActivity = page.locator('tr[data-key="edge:hello"] td').last();
      await expect.poll(() => lastActivity.textContent(), patience).toMatch(/^\d+ s ago$/);
    } finally {
      await page.close();
    }
  });

  it('shows the awaiting_approval badge whole when the window is 1280 px wide', async () => {
    await send('edge:refund', 'refund 42');
    await context.clock.advance(1000);
    const { page } = await signedInPage();
    try {
      const badge = page.locator('tr[data-key="edge:refund"] .state');
      await expect.poll(() => badge.textContent(), patience).toBe('awaiting_approval');
      const fits = await badge.evaluate((badgeElement) => {
        const element = badgeElement as unknown as Measured;
        const cell = element.parentElement;
        const own = element.getBoundingClientRect();
        const box = cell.getBoundingClientRect();
        return {
          textWhole: element.scrollWidth <= element.clientWidth,
          cellWhole: cell.scrollWidth <= cell.clientWidth,
          insideCell: own.left >= box.left && own.right <= box.right,
          insideViewport: own.right <= (globalThis as unknown as { innerWidth: number }).innerWidth,
        };
      });
      expect(fits).toEqual({ textWhole: true, cellWhole: true, insideCell: true, insideViewport: true });
    } finally {
      await page.close();
    }
  });

  it('logs no console error when it loads with a valid token', async () => {
    const { page, errors } = await signedInPage();
    try {
      // The browser asks for an icon once a page loaded (without the token: a 401 in the console); a second load
      // lets the first one's request come back. The page declares its own icon, so none goes out.
      await page.reload();
      await expect
        .poll(() => page.getByTestId('sessions-count').textContent(), patience)
        .toContain('loaded in');
      expect(errors).toEqual([]);
      expect(await page.locator('link[rel="icon"]').count()).toBe(1);
    } finally {
      await page.close();
    }
  });

  it('signs in once from the link serve prints, and the token is never in a URL', async () => {
    const link = context.signInLink();
    expect(link).toMatch(/\/#sign-in=[A-Za-z0-9_-]{43}$/);
    const page = await context.browser.newPage({ viewport: { width: 1280, height: 800 } });
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    try {
      await page.goto(link as string);
      await expect
        .poll(() => page.getByTestId('sessions-count').textContent(), patience)
        .toContain('loaded in');
      expect(await page.evaluate('sessionStorage.getItem("agentlanes.token")')).toBe(token);
      // The code leaves the address bar at once; the token never rides in any URL.
      expect(page.url()).toBe(`${context.url}/`);
      expect(urls.filter((url) => url.includes(token))).toEqual([]);
      // A link works once.
      const again = await context.browser.newPage();
      try {
        await again.goto(link as string);
        await expect
          .poll(() => again.getByRole('alert').textContent(), patience)
          .toBe('This sign-in link was used or has expired; sign in with a token.');
        expect(await again.evaluate('sessionStorage.getItem("agentlanes.token")')).toBeNull();
      } finally {
        await again.close();
      }
    } finally {
      await page.close();
    }
  });
});
