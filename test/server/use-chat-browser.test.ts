import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from 'agentlanes';
import { z } from 'zod';
import { launchChromium } from '../dashboard/support/browser.js';
import { adminToken, startServer, type ServerHarness } from './server-harness.js';

/** The useChat page, bundled once for the file (React in production mode, as a page ships it). */
let bundle = '';
beforeAll(async () => {
  const built = await build({
    entryPoints: [fileURLToPath(new URL('./use-chat-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  bundle = built.outputFiles[0]?.text ?? '';
}, 60_000);

const html =
  '<!doctype html><html><body><div id="root"></div><script type="module" src="/page.js"></script></body></html>';

/** A loopback server with the page, passing every other request (streams included) to the agentlanes server. */
async function servePage(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createHttpServer((incoming, outgoing) => {
    if (incoming.url?.startsWith('/page.js') === true) {
      outgoing.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      return;
    }
    if (incoming.url?.startsWith('/v1/') !== true) {
      outgoing.writeHead(200, { 'content-type': 'text/html' }).end(html);
      return;
    }
    const forwarded = httpRequest(
      `${target}${incoming.url}`,
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    outgoing.on('close', () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let harness: ServerHarness | undefined;
let pageServer: { url: string; close(): Promise<void> } | undefined;
let browser: Browser | undefined;
beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await pageServer?.close();
  await harness?.close();
  pageServer = undefined;
  harness = undefined;
});

const cancelOrder = defineTool({
  name: 'cancel',
  description: 'Cancel an order',
  input: z.object({ orderId: z.string() }),
  risk: 'high',
  execute: ({ orderId }) => Promise.resolve({ orderId, cancelled: true }),
});

const askCustomer = defineTool({
  name: 'ask',
  description: 'Ask the customer (answered by the page)',
  input: z.object({ question: z.string() }),
});

/** The tools a runtime of the test serves. */
type RuntimeTools = NonNullable<NonNullable<Parameters<typeof startServer>[1]>['tools']>;

/** What the page renders: its status, and each message's parts (type, state, text). */
interface Rendered {
  status: string;
  error: string;
  messages: { role: string; id: string; parts: { type: string; state: string; text: string }[] }[];
}

/** Read what the page shows. */
function rendered(page: Page): Promise<Rendered> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as { document: { getElementById(id: string): HTMLLike | null } })
      .document;
    interface HTMLLike {
      dataset: Record<string, string | undefined>;
      textContent: string | null;
      children: ArrayLike<HTMLLike>;
    }
    const main = root.getElementById('chat');
    if (main === null) return { status: 'absent', error: '', messages: [] };
    return {
      status: main.dataset.status ?? '',
      error: main.dataset.error ?? '',
      messages: Array.from(main.children).map((list) => ({
        role: list.dataset.role ?? '',
        id: list.dataset.id ?? '',
        parts: Array.from(list.children).map((item) => ({
          type: item.dataset.type ?? '',
          state: item.dataset.state ?? '',
          text: item.textContent ?? '',
        })),
      })),
    };
  });
}

/** Call one of the page's actions (`window.chatActions[name](...args)`), without waiting for it. */
async function act(page: Page, name: string, ...args: unknown[]): Promise<void> {
  await page.evaluate(
    ({ name, args }) => {
      const actions = (globalThis as unknown as { chatActions: Record<string, (...a: unknown[]) => unknown> })
        .chatActions;
      void actions[name]?.(...args);
    },
    { name, args },
  );
}

/** Wait until what the page renders passes `check` (polling; the timeout only guards a hang). */
async function until(page: Page, check: (shown: Rendered) => boolean): Promise<Rendered> {
  let last: Rendered | undefined;
  await expect
    .poll(
      async () => {
        last = await rendered(page);
        return check(last);
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  return last as Rendered;
}

/** The page on session `key`, ready (its resume request answered). */
async function openChat(
  key: string,
  script: Parameters<typeof startServer>[0],
  tools: RuntimeTools = [cancelOrder],
) {
  harness = await startServer(script, { tools });
  pageServer = await servePage(harness.server.url);
  const page = await (browser as Browser).newPage();
  await page.goto(`${pageServer.url}/?session=${encodeURIComponent(key)}&token=${adminToken}`);
  await until(page, (shown) => shown.status === 'ready');
  return page;
}

/** The last assistant message's parts as the page shows them. */
function answer(shown: Rendered) {
  return shown.messages.filter((message) => message.role === 'assistant').at(-1)?.parts ?? [];
}

describe('useChat (@ai-sdk/react) in Chromium against the chat route', () => {
  it('shows the call as approval-requested, then the tool output and the rest once the page approves', async () => {
    const page = await openChat('web:approve', [
      { text: 'Cancelling.', toolCalls: [{ id: 'call-1', name: 'cancel', args: { orderId: 'o-1' } }] },
      { text: 'It is cancelled.' },
    ]);
    await act(page, 'send', 'cancel o-1');
    // The part shows as soon as its chunk arrives; the stream ends (status ready) a moment later.
    const waiting = await until(
      page,
      (shown) =>
        shown.status === 'ready' && answer(shown).some((part) => part.state === 'approval-requested'),
    );
    expect(answer(waiting)).toEqual([
      { type: 'text', state: 'done', text: 'Cancelling.' },
      { type: 'tool-cancel', state: 'approval-requested', text: '' },
    ]);
    await act(page, 'approve', 'call-1');
    const done = await until(page, (shown) => shown.status === 'ready' && answer(shown).length === 3);
    expect(done.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(answer(done)).toEqual([
      { type: 'text', state: 'done', text: 'Cancelling.' },
      { type: 'tool-cancel', state: 'output-available', text: '{"orderId":"o-1","cancelled":true}' },
      { type: 'text', state: 'done', text: 'It is cancelled.' },
    ]);
  });

  it('shows output-denied and the rest of the answer when the page rejects the call', async () => {
    const page = await openChat('web:reject', [
      { text: 'Cancelling.', toolCalls: [{ id: 'call-1', name: 'cancel', args: { orderId: 'o-1' } }] },
      { text: 'Left as it is.' },
    ]);
    await act(page, 'send', 'cancel o-1');
    await until(page, (shown) => answer(shown).some((part) => part.state === 'approval-requested'));
    await act(page, 'reject', 'call-1', 'not this one');
    const done = await until(page, (shown) => shown.status === 'ready' && answer(shown).length === 3);
    expect(answer(done)).toEqual([
      { type: 'text', state: 'done', text: 'Cancelling.' },
      { type: 'tool-cancel', state: 'output-denied', text: '' },
      { type: 'text', state: 'done', text: 'Left as it is.' },
    ]);
    expect(await harness?.runtime.session('web:reject').runs()).toMatchObject([{ status: 'completed' }]);
  });

  it('hands the run a deferred tool’s result added with addToolOutput', async () => {
    const page = await openChat(
      'web:deferred',
      [
        { toolCalls: [{ id: 'call-1', name: 'ask', args: { question: 'which order?' } }] },
        { text: 'Looking at o-7.' },
      ],
      [askCustomer],
    );
    await act(page, 'send', 'cancel an order');
    await until(
      page,
      (shown) => shown.status === 'ready' && answer(shown).some((part) => part.state === 'input-available'),
    );
    await act(page, 'supply', 'call-1', 'ask', { orderId: 'o-7' });
    const done = await until(page, (shown) => shown.status === 'ready' && answer(shown).length === 2);
    expect(answer(done)).toEqual([
      { type: 'tool-ask', state: 'output-available', text: '{"orderId":"o-7"}' },
      { type: 'text', state: 'done', text: 'Looking at o-7.' },
    ]);
  });

  it('resumes the answer after a reload mid-stream, every character once', async () => {
    const text = 'one two three four five six seven';
    const page = await openChat('web:resume', [{ text, tokenDelayMs: 100 }]);
    await act(page, 'send', 'count');
    await until(page, (shown) => answer(shown)[0]?.text.startsWith('one') === true);
    await harness?.clock.advance(250);
    await page.reload();
    // The reloaded page holds no messages: useChat({ resume: true }) asks the server for the active run.
    await until(
      page,
      (shown) => shown.status === 'streaming' && answer(shown)[0]?.text.startsWith('one two') === true,
    );
    await harness?.clock.runAll();
    const done = await until(page, (shown) => shown.status === 'ready' && answer(shown)[0]?.state === 'done');
    expect(answer(done)).toEqual([{ type: 'text', state: 'done', text }]);
  });

  it('regenerates the last answer as a new run on the same user text', async () => {
    const page = await openChat('web:regenerate', [{ text: 'First answer.' }, { text: 'Second answer.' }]);
    await act(page, 'send', 'tell me');
    await until(page, (shown) => shown.status === 'ready' && answer(shown)[0]?.text === 'First answer.');
    await act(page, 'regenerate');
    const done = await until(
      page,
      (shown) => shown.status === 'ready' && answer(shown)[0]?.text === 'Second answer.',
    );
    expect(done.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(answer(done)).toEqual([{ type: 'text', state: 'done', text: 'Second answer.' }]);
    const runs = await harness?.runtime.session('web:regenerate').runs();
    expect(runs?.map((run) => run.text)).toEqual(['First answer.', 'Second answer.']);
  });

  it('stops the run when the page calls stop', async () => {
    const page = await openChat('web:stop', [{ text: 'one two three four', tokenDelayMs: 100 }]);
    await act(page, 'send', 'count');
    await until(
      page,
      (shown) => shown.status === 'streaming' && answer(shown)[0]?.text.startsWith('one') === true,
    );
    await act(page, 'stop');
    const stopped = await until(page, (shown) => shown.status === 'ready');
    expect(answer(stopped)[0]?.text).not.toContain('four');
    const session = harness?.runtime.session('web:stop');
    await expect.poll(async () => (await session?.runs())?.[0]?.status, { timeout: 20_000 }).toBe('aborted');
    expect(session?.status().state).toBe('idle');
  });
});
