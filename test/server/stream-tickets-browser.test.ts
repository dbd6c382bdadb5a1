import { createServer as createTcpServer, connect, type Server, type Socket } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { launchChromium } from '../dashboard/support/browser.js';
import { readEvents, sseMessages, startServer, webToken, type ServerHarness } from './server-harness.js';

/**
 * A loopback TCP proxy in front of the server: the browser talks to it, so a test can cut every connection
 * (as a network would) and hold new ones back until it lets them through.
 */
interface CuttingProxy {
  readonly url: string;
  /** Destroy every connection open through the proxy, on both sides. */
  cut(): void;
  /** Keep new connections waiting (unanswered) until `release`. */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function startProxy(target: number): Promise<CuttingProxy> {
  const open = new Set<Socket>();
  const held: Socket[] = [];
  let holding = false;
  const forward = (client: Socket): void => {
    const upstream = connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  const server: Server = createTcpServer((client) => {
    client.pause();
    if (holding) held.push(client);
    else forward(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut: () => {
      for (const socket of open) socket.destroy();
    },
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const client of held.splice(0)) forward(client);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of [...open, ...held]) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let harness: ServerHarness | undefined;
let proxy: CuttingProxy | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  await proxy?.close();
  await harness?.close();
  browser = undefined;
  proxy = undefined;
  harness = undefined;
});

/** What the page's EventSource saw. */
interface Seen {
  received: { id: string; type: string; runId?: string }[];
  opens: number;
  errors: number;
  readyState: number;
}

/** In the page: get a ticket with the token over fetch, and open a native EventSource on `path` with it. */
async function openEventSource(page: Page, label: string, path: string, ticket?: string): Promise<string> {
  return page.evaluate(
    async ({ token, label, path, ticket }) => {
      let chosen = ticket;
      if (chosen === undefined) {
        const response = await fetch('/v1/stream-tickets', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ sessionKey: 'web:1' }),
        });
        chosen = ((await response.json()) as { ticket: string }).ticket;
      }
      const seen = { received: [], opens: 0, errors: 0, readyState: 0 } as {
        received: { id: string; type: string; runId?: string }[];
        opens: number;
        errors: number;
        readyState: number;
      };
      const source = new EventSource(`${path}${path.includes('?') ? '&' : '?'}ticket=${chosen}`);
      source.onopen = () => {
        seen.opens += 1;
        seen.readyState = source.readyState;
      };
      source.onerror = () => {
        seen.errors += 1;
        seen.readyState = source.readyState;
      };
      source.onmessage = (message) => {
        const event = JSON.parse(message.data as string) as { type: string; runId?: string };
        seen.received.push({
          id: message.lastEventId,
          type: event.type,
          ...(event.runId ? { runId: event.runId } : {}),
        });
      };
      (globalThis as unknown as { seen: Record<string, typeof seen> }).seen ??= {};
      (globalThis as unknown as { seen: Record<string, typeof seen> }).seen[label] = seen;
      return chosen;
    },
    { token: webToken, label, path, ticket },
  );
}

function seenBy(page: Page, label: string): Promise<Seen> {
  return page.evaluate(
    (label) => (globalThis as unknown as { seen: Record<string, Seen> }).seen[label] as Seen,
    label,
  );
}

/** Send a message as the admin and wait for its run's end; its run id. */
async function runOnce(text: string): Promise<string> {
  const sent = await harness!.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text } });
  const { runId } = (await sent.json()) as { runId: string };
  await harness!.request('/v1/sessions/web:1/wait', { method: 'POST' });
  return runId;
}

/** Let event-loop turns pass until the server holds no open event stream (it noticed the cut). */
async function untilStreamsClosed(): Promise<void> {
  for (let turn = 0; turn < 1000; turn++) {
    const stats = (await (await harness!.request('/v1/stats')).json()) as { eventStreams: { open: number } };
    if (stats.eventStreams.open === 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error('an event stream stayed open');
}

describe('stream tickets in Chromium', () => {
  it('lets a native EventSource follow a session with a ticket and resume after a cut with no gap and no repeat', async () => {
    harness = await startServer([{ text: 'first answer' }, { text: 'second answer' }], {}, { retryMs: 100 });
    proxy = await startProxy(harness.server.port);
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`${proxy.url}/healthz`);
    const first = await runOnce('one');
    const ticket = await openEventSource(page, 'follower', '/v1/sessions/web%3A1/events?after=0');
    await expect
      .poll(async () => (await seenBy(page, 'follower')).received.some((event) => event.type === 'run.ended'))
      .toBe(true);

    proxy.hold();
    proxy.cut();
    await untilStreamsClosed();
    await expect.poll(async () => (await seenBy(page, 'follower')).errors).toBe(1);
    // Events while the browser is away: the reconnect must bring them.
    const second = await runOnce('two');
    proxy.release();
    await expect
      .poll(
        async () =>
          (await seenBy(page, 'follower')).received.filter((event) => event.type === 'run.ended').length,
      )
      .toBe(2);

    const expected = await readEvents(
      sseMessages(await harness.request('/v1/sessions/web:1/events?after=0')),
      (event: RuntimeEvent) => event.type === 'run.ended' && event.runId === second,
    );
    const seen = await seenBy(page, 'follower');
    expect(seen.received.map((event) => event.id)).toEqual(expected.ids);
    expect(seen.received.map((event) => event.runId).filter((runId) => runId !== undefined)).toContain(first);
    expect(seen.opens).toBe(2);
    expect(seen.readyState).toBe(1);

    // The same ticket while its stream is open: refused, and a native EventSource gives up on a 401.
    await openEventSource(page, 'reuse', '/v1/sessions/web%3A1/events', ticket);
    await expect.poll(async () => (await seenBy(page, 'reuse')).readyState).toBe(2);
    expect(await seenBy(page, 'reuse')).toMatchObject({ opens: 0, received: [] });

    // A ticket is no credential on any other route.
    const fresh = await openEventSource(page, 'fresh', '/v1/sessions/web%3A1/events');
    const statuses = await page.evaluate(async (ticket) => {
      const paths = ['/v1/sessions/web%3A1', '/v1/sessions', '/v1/approvals', '/v1/sessions/web%3A1/runs'];
      return Promise.all(paths.map(async (path) => (await fetch(`${path}?ticket=${ticket}`)).status));
    }, fresh);
    expect(statuses).toEqual([401, 401, 401, 401]);

    // A ticket past its 60 s: refused for good.
    const late = await page.evaluate(async (token) => {
      const response = await fetch('/v1/stream-tickets', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sessionKey: 'web:1' }),
      });
      return ((await response.json()) as { ticket: string }).ticket;
    }, webToken);
    await harness.clock.advance(60_000);
    await openEventSource(page, 'late', '/v1/sessions/web%3A1/events', late);
    await expect.poll(async () => (await seenBy(page, 'late')).readyState).toBe(2);
    expect(await seenBy(page, 'late')).toMatchObject({ opens: 0, received: [] });
  });
});
