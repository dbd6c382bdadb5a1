import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { createRuntime, defineTool, type Runtime } from 'agentlanes';
import { createServer } from 'agentlanes/server';
import {
  fakeClock,
  scriptedModel,
  type FakeClock,
  type ScriptEntry,
  type ScriptedRequest,
} from 'agentlanes/testing';
import { launchChromium } from './browser.js';
import { buildDashboardPage } from './build-page.js';

/** The server's operator token (unscoped, every capability). */
export const token = 'dashboard-test-token-0123456789';
/** A chat client's token: scoped to `web:` sessions. */
export const scopedToken = 'dashboard-web-token-0123456789';
/** A monitoring token: unscoped, reading only. */
export const readerToken = 'dashboard-reader-token-0123456789';

/** The last user message of a request (what the chat asked), and whether a tool answered since. */
function asked(request: ScriptedRequest): { text: string; answered: boolean } {
  const index = request.messages.findLastIndex((message) => message.role === 'user');
  const last = request.messages[index];
  return {
    text: last?.role === 'user' ? last.content : '',
    answered: request.messages.slice(index).some((message) => message.role === 'tool'),
  };
}

/** The model: refunds need a tool call, stories stream one word a minute, `cool` fails on profile p1. */
function script(request: ScriptedRequest): ScriptEntry {
  const { text, answered } = asked(request);
  if (text.startsWith('refund') && !answered) {
    return { toolCalls: [{ name: 'refund', args: { orderId: text.split(' ')[1] ?? '', amount: 10 } }] };
  }
  if (text.startsWith('refund')) return { text: 'The refund is done.' };
  if (text.startsWith('lookup') && !answered)
    return { toolCalls: [{ name: 'lookup', args: { q: 'order 9' } }] };
  if (text.startsWith('lookup')) return { text: 'Found it.' };
  if (text.startsWith('story')) return { text: 'Once upon a time there was a lane', tokenDelayMs: 60_000 };
  if (text.startsWith('cool') && request.profileId === 'p1') {
    return { error: { status: 429, message: 'rate limit exceeded' } };
  }
  return { text: `Hello there, you said ${JSON.stringify(text)}.` };
}

/** The page under test, the server and runtime behind it, and what the tools and the page saw. */
export interface Context {
  /** Script errors and Content-Security-Policy violations the page reported. */
  problems: string[];
  browser: Browser;
  page: Page;
  url: string;
  runtime: Runtime;
  clock: FakeClock;
  refunds: unknown[];
  /** A new one-time sign-in link of the server, as `agentlanes serve` prints it. */
  signInLink(): string | undefined;
  close(): Promise<void>;
}

/**
 * Build the page, start a runtime (SQLite file, fake clock, two auth profiles, an approval tool and a deferred
 * one) behind a real loopback server, and open Chromium on it.
 */
export async function startDashboard(): Promise<Context> {
  const assetsDir = await buildDashboardPage();
  const folder = mkdtempSync(join(tmpdir(), 'agentlanes-dashboard-ledger-'));
  const clock = fakeClock({ now: Date.UTC(2026, 0, 5, 9, 30) });
  const refunds: unknown[] = [];
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk: 'high',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    execute: (args) => {
      refunds.push(args);
      return Promise.resolve({ refunded: args.amount });
    },
  });
  // No execute: a deferred tool, whose result comes from outside (here, the dashboard).
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look an order up',
    input: z.object({ q: z.string() }),
  });
  const runtime = createRuntime({
    ledger: { path: join(folder, 'ledger.db') },
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    authProfiles: [
      { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' },
      { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-two-0000' },
    ],
    tools: [refund, lookup],
    clock,
  });
  const server = createServer(runtime, {
    auth: {
      tokens: [
        { token },
        { token: scopedToken, sessionKeyPrefixes: ['web:'] },
        { token: readerToken, can: ['read'] },
      ],
    },
    clock,
    dashboard: { assetsDir },
  });
  const listening = await server.listen({ port: 0 });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) problems.push(message.text());
  });
  return {
    problems,
    browser,
    page,
    url: listening.url,
    runtime,
    clock,
    refunds,
    signInLink: () => server.signInLink(listening.url),
    async close() {
      await browser.close();
      await listening.close();
      const closing = runtime.close({ timeoutMs: 1000 });
      await clock.runAll();
      await closing;
      rmSync(folder, { recursive: true, force: true });
      rmSync(assetsDir, { recursive: true, force: true });
    },
  };
}
