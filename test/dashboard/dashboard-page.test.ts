import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readerToken, scopedToken, startDashboard, token, type Context } from './support/page-fixture.js';

// The README's screenshot is rewritten only on request (AGENTLANES_SCREENSHOTS=docs), so a test run leaves the tree clean.
const screenshots =
  process.env['AGENTLANES_SCREENSHOTS'] === 'docs' ? join(import.meta.dirname, '../../docs') : tmpdir();

let context: Context;
beforeAll(async () => {
  context = await startDashboard();
}, 60_000);
afterAll(async () => {
  await context?.close();
});

/** Call the API the way any client does: fetch over the loopback socket with the bearer token. */
async function api(path: string, body?: unknown): Promise<Response> {
  return fetch(`${context.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A call waiting for an operator, as `GET /v1/approvals` lists it. */
interface PendingCall {
  runId: string;
  toolCallId: string;
}

async function send(key: string, text: string): Promise<{ disposition: string; runId?: string }> {
  const response = await api(`/v1/sessions/${encodeURIComponent(key)}/messages`, { text });
  expect(response.status).toBe(202);
  return (await response.json()) as { disposition: string; runId?: string };
}

function sessionRow(key: string) {
  return context.page.locator(`tr[data-key="${key}"]`);
}

async function openSession(key: string): Promise<void> {
  await sessionRow(key).getByRole('button', { name: key }).click();
  await expect.poll(() => context.page.locator('#session-title code').textContent()).toBe(key);
}

function timeline() {
  return context.page.getByRole('log');
}

describe('the dashboard page', () => {
  it('refuses to show anything without a token, and refuses a wrong token', async () => {
    const { page, url } = context;
    expect((await fetch(`${url}/v1/stats`)).status).toBe(401);
    await page.goto(url);
    await expect.poll(() => page.getByLabel('API token').isVisible()).toBe(true);
    expect(await page.locator('[data-total]').count()).toBe(0);
    await page.getByLabel('API token').fill('wrong-token-wrong-token-0000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The server refused this token.');
    expect(await page.evaluate('sessionStorage.getItem("agentlanes.token")')).toBeNull();
  });

  it('refuses a token that the server accepts but that is no operator token', async () => {
    const { page } = context;
    for (const [candidate, reason] of [
      [scopedToken, 'This token is scoped to some sessions; the dashboard needs an operator token.'],
      [readerToken, 'This token lacks the "operate" capability; the dashboard needs an operator token.'],
    ] as const) {
      await page.getByLabel('API token').fill(candidate);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe(reason);
      expect(await page.evaluate('sessionStorage.getItem("agentlanes.token")')).toBeNull();
    }
  });

  it('signs in with the token, keeps it in sessionStorage and never in the URL', async () => {
    const { page, url } = context;
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('live');
    expect(await page.evaluate('sessionStorage.getItem("agentlanes.token")')).toBe(token);
    expect(page.url()).toBe(`${url}/`);
    expect(page.url()).not.toContain(token);
    // A reload keeps the tab signed in, from sessionStorage.
    await page.reload();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('live');
  });

  it('shows a message sent over the API live in the table and in the session timeline', async () => {
    const { page } = context;
    const sent = await send('web:alice', 'hello dashboard');
    expect(sent.disposition).toBe('started');
    await expect.poll(() => sessionRow('web:alice').count()).toBe(1);
    await openSession('web:alice');
    await expect.poll(() => timeline().textContent()).toContain('message received');
    await expect.poll(() => timeline().textContent()).toContain('run ended');
    const text = (await timeline().textContent()) ?? '';
    expect(text).toContain('"hello dashboard"');
    expect(text).toContain('Hello there, you said');
    expect(text).toContain('completed');
    await expect.poll(() => page.locator('[data-testid="session-state"]').textContent()).toBe('idle');
    await expect.poll(() => page.locator('[data-total="messages"]').textContent()).not.toBe('');
  });

  it('approves a call waiting for approval with its button, and the run ends', async () => {
    const { page } = context;
    await send('web:bob', 'refund 42');
    const card = page.locator('li.card', { hasText: 'web:bob' });
    await card.getByRole('button', { name: /^Approve refund/ }).click();
    // The card goes once the server took the decision; a wait sent before that would answer `paused`.
    await expect.poll(() => card.count()).toBe(0);
    const ended = await api('/v1/sessions/web:bob/wait?timeoutMs=10000', {});
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(context.refunds).toEqual([{ orderId: '42', amount: 10 }]);
  });

  it('approves with edited arguments: the tool runs with what the operator typed', async () => {
    const { page } = context;
    await send('web:bob', 'refund 43');
    const card = page.locator('li.card', { hasText: 'web:bob' });
    await card.getByRole('button', { name: 'Edit arguments' }).click();
    await card.getByLabel('Arguments (JSON)').fill('{ "orderId": "43", "amount": 4.5 }');
    await card.getByRole('button', { name: 'Approve with these arguments' }).click();
    await expect.poll(() => card.count()).toBe(0);
    const ended = await api('/v1/sessions/web:bob/wait?timeoutMs=10000', {});
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(context.refunds).toEqual([
      { orderId: '42', amount: 10 },
      { orderId: '43', amount: 4.5 },
    ]);
  });

  it('rejects a call waiting for approval with its button: the tool never runs, the run ends, the card goes', async () => {
    const { page } = context;
    const { runId } = await send('web:bob', 'refund 44');
    const waiting = async () => {
      const { pending } = (await (await api('/v1/approvals')).json()) as { pending: PendingCall[] };
      return pending.filter((call) => call.runId === runId);
    };
    await expect.poll(async () => (await waiting()).length).toBe(1);
    const [call] = await waiting();
    // The card of this very call: the panel may still show the previous test's card for a moment.
    const card = page.locator(`li.card[data-tool-call="${call?.toolCallId}"]`, { hasText: 'web:bob' });
    await card.getByRole('button', { name: /^Reject refund/ }).click();
    // The card goes once the server took the decision; a wait sent before that would answer `paused`.
    await expect.poll(() => card.count()).toBe(0);
    expect(await waiting()).toEqual([]);
    const ended = await api('/v1/sessions/web:bob/wait?timeoutMs=10000', {});
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { runId, status: 'completed' } });
    // Only the two refunds approved above ran; the model got the refusal as the call's result instead.
    expect(context.refunds).toEqual([
      { orderId: '42', amount: 10 },
      { orderId: '43', amount: 4.5 },
    ]);
    const turns = (await (await api('/v1/sessions/web:bob/transcript')).json()) as { turns: unknown };
    expect(JSON.stringify(turns)).toContain('The operator rejected this call.');
  });

  it('sends the result of a deferred tool call typed in the panel, and the run goes on with it', async () => {
    const { page } = context;
    await send('web:frank', 'lookup order 9');
    const card = page.locator('li.card', { hasText: 'web:frank' });
    await card.getByLabel('Result (JSON)').fill('{ "status": "shipped" }');
    await card.getByRole('button', { name: 'Send result' }).click();
    await expect.poll(() => card.count()).toBe(0);
    const ended = await api('/v1/sessions/web:frank/wait?timeoutMs=10000', {});
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    const turns = (await (await api('/v1/sessions/web:frank/transcript')).json()) as { turns: unknown };
    expect(JSON.stringify(turns)).toContain('shipped');
  });

  it('cancels a queued message with its button, then stops the streaming run with the abort button', async () => {
    const { page } = context;
    await send('web:carol', 'story please');
    await openSession('web:carol');
    await expect.poll(() => page.locator('[data-testid="session-state"]').textContent()).toBe('streaming');
    const queued = await api('/v1/sessions/web:carol/messages', {
      text: 'and another one',
      mode: 'followup',
    });
    const { messageId } = (await queued.json()) as { messageId: string };
    await page.getByRole('button', { name: `Cancel queued message ${messageId}` }).click();
    await expect.poll(() => page.getByRole('heading', { name: /^Queue/ }).textContent()).toBe('Queue (0)');
    expect(await (await api('/v1/sessions/web:carol/queue')).json()).toEqual({ queue: [] });
    await page.getByRole('button', { name: 'Abort run' }).click();
    const ended = await api('/v1/sessions/web:carol/wait?timeoutMs=10000', {});
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'aborted' } });
    await expect.poll(() => timeline().textContent()).toContain('aborted');
    await expect.poll(() => page.locator('[data-testid="session-state"]').textContent()).toBe('idle');
  });

  it('shows a cooling profile with a countdown that runs down', async () => {
    const { page } = context;
    await send('web:dave', 'cool it');
    const ended = await api('/v1/sessions/web:dave/wait?timeoutMs=10000', {});
    expect(await ended.json()).toMatchObject({ run: { status: 'completed' } });
    const row = page.locator('tr[data-profile="p1"]');
    await expect.poll(() => row.locator('.state').textContent()).toContain('cooling');
    const countdown = row.locator('[data-countdown="p1"]');
    const first = ((await countdown.textContent()) ?? '').trim();
    expect(first).toMatch(/^\d+:\d\d$/);
    await expect
      .poll(async () => ((await countdown.textContent()) ?? '').trim(), { timeout: 5000 })
      .not.toBe(first);
    expect(((await page.locator('tr[data-profile="p2"] .state').textContent()) ?? '').trim()).toBe('ready');
    expect(await row.locator('td').nth(3).textContent()).toBe('1');
  });

  it('fits a phone screen without sideways scrolling, and a laptop screenshot goes in the README', async () => {
    const { page } = context;
    await send('web:erin', 'refund 7');
    await send('telegram:1001', 'hello from telegram');
    await openSession('web:alice');
    await expect.poll(() => page.locator('li.card').count()).toBe(1);
    await page.screenshot({ path: join(screenshots, 'dashboard.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    // The chart follows the new width on its next resize callback: wait for the layout to settle.
    const overflow = () =>
      page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    await expect.poll(overflow, { timeout: 10_000 }).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(tmpdir(), 'agentlanes-dashboard-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('can be driven from the keyboard: filter, then arrow through the rows', async () => {
    const { page } = context;
    await page.getByLabel('Filter by key prefix').fill('web:');
    await expect.poll(() => page.locator('[data-testid="sessions-count"]').textContent()).toMatch(/^6 of 7/);
    await page.getByRole('button', { name: 'Session', exact: true }).click();
    await expect.poll(() => page.locator('tbody th button').first().textContent()).toContain('web:alice');
    await page.locator('tbody th button').first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#session-title code').textContent()).toBe('web:bob');
  });

  it('ran the whole time without a script error or a blocked load', () => {
    expect(context.problems).toEqual([]);
  });
});
