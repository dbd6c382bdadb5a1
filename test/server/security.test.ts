import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type Ledger } from 'agentlanes';
import { createServer } from 'agentlanes/server';
import { scriptedModel } from 'agentlanes/testing';
import { z } from 'zod';
import { defineTool } from 'agentlanes';
import { adminToken, startServer, webToken, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** What the ledger holds for a session: inbox, runs and events. */
async function stored(ledger: Ledger, sessionKey: string) {
  return {
    runs: await ledger.listRuns(sessionKey),
    events: await ledger.readEvents({ after: 0, limit: 1000, sessionKey }),
    sessions: (await ledger.listSessions()).map((record) => record.sessionKey),
  };
}

describe('createServer: security', () => {
  it('refuses requests without a token, with a wrong or malformed one, and stores nothing for them', async () => {
    const ledger = createMemoryLedger();
    harness = await startServer([{ text: 'never' }], { ledger });
    const send = { method: 'POST', json: { text: 'hi' } } as const;
    for (const token of [null, 'wrong-token-0123456789', 'bad token with spaces']) {
      const response = await harness.request('/v1/sessions/web:1/messages', { ...send, token });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await response.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }
    const basic = await harness.request('/v1/sessions/web:1', {
      token: null,
      headers: { authorization: `Basic ${adminToken}` },
    });
    expect(basic.status).toBe(401);
    expect(await stored(ledger, 'web:1')).toEqual({ runs: [], events: [], sessions: [] });
    const health = await harness.request('/healthz', { token: null });
    expect(await health.json()).toEqual({ ok: true });
  });

  it('scopes a token to its session-key prefixes: 403 elsewhere, and lists only what it covers', async () => {
    const ledger = createMemoryLedger();
    harness = await startServer([{ text: 'one' }, { text: 'two' }], { ledger });
    const own = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      token: webToken,
      json: { text: 'hi' },
    });
    expect(own.status).toBe(202);
    await harness.request('/v1/sessions/web:1/wait', { method: 'POST', token: webToken });
    const other = await harness.request('/v1/sessions/telegram:9/messages', {
      method: 'POST',
      token: webToken,
      json: { text: 'hi' },
    });
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ error: { code: 'forbidden' } });
    expect(await stored(ledger, 'telegram:9')).toMatchObject({ runs: [], events: [] });
    for (const path of [
      '/v1/sessions/telegram:9',
      '/v1/sessions/telegram:9/events',
      '/v1/sessions/telegram:9/runs',
    ]) {
      expect((await harness.request(path, { token: webToken })).status).toBe(403);
    }
    await harness.request('/v1/sessions/telegram:9/messages', { method: 'POST', json: { text: 'admin' } });
    await harness.request('/v1/sessions/telegram:9/wait', { method: 'POST' });
    const scoped = (await (await harness.request('/v1/sessions', { token: webToken })).json()) as {
      sessions: { key: string }[];
    };
    expect(scoped.sessions.map((session) => session.key)).toEqual(['web:1']);
    const all = (await (await harness.request('/v1/sessions')).json()) as { sessions: { key: string }[] };
    expect(all.sessions.map((session) => session.key)).toEqual(['telegram:9', 'web:1']);
    expect((await harness.request('/metrics', { token: webToken })).status).toBe(403);
    expect((await harness.request('/v1/stats', { token: webToken })).status).toBe(403);
  });

  it('answers 400 for bad JSON, unknown fields and wrong types, and 413 over the body cap, storing nothing', async () => {
    const ledger = createMemoryLedger();
    harness = await startServer([{ text: 'never' }], { ledger }, { bodyLimitBytes: 2048 });
    const path = '/v1/sessions/web:1/messages';
    const bad = [
      { body: '{"text": "hi"', code: 'invalid_input', message: /not valid JSON/ },
      { body: JSON.stringify({ text: 'hi', colour: 'red' }), code: 'invalid_input', message: /colour/ },
      { body: JSON.stringify({ text: 42 }), code: 'invalid_input', message: /text/ },
      { body: JSON.stringify({ text: 'hi', mode: 'sometimes' }), code: 'invalid_input', message: /mode/ },
      { body: JSON.stringify([]), code: 'invalid_input', message: /object/ },
    ];
    for (const { body, code, message } of bad) {
      const response = await harness.request(path, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { error: { code: string; message: string } };
      expect(answer.error.code).toBe(code);
      expect(answer.error.message).toMatch(message);
    }
    const big = await harness.request(path, { method: 'POST', json: { text: 'x'.repeat(4096) } });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const badQuery = await harness.request('/v1/sessions/web:1/wait?timeoutMs=soon', { method: 'POST' });
    expect(badQuery.status).toBe(400);
    const badCursor = await harness.request('/v1/events', { headers: { 'last-event-id': 'abc' } });
    expect(badCursor.status).toBe(400);
    const badKey = await harness.request(`/v1/sessions/${'k'.repeat(600)}`);
    expect(badKey.status).toBe(400);
    const unknownRoute = await harness.request('/v1/nothing');
    expect(unknownRoute.status).toBe(404);
    expect(await unknownRoute.json()).toMatchObject({ error: { code: 'not_found' } });
    expect(await stored(ledger, 'web:1')).toEqual({ runs: [], events: [], sessions: [] });
  });

  it('answers 503 runtime_closed once the runtime is closed', async () => {
    harness = await startServer([]);
    const closing = harness.runtime.close();
    await harness.clock.runAll();
    await closing;
    const response = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { text: 'hi' },
    });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { code: 'runtime_closed' } });
  });

  it('sends no CORS headers by default and answers the configured origin when CORS is on', async () => {
    harness = await startServer([]);
    const plain = await harness.request('/v1/sessions/web:1', { headers: { origin: 'https://app.example' } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    await harness.close();
    harness = await startServer([], {}, { cors: { origin: 'https://app.example' } });
    const preflight = await harness.request('/v1/sessions/web:1/messages', {
      method: 'OPTIONS',
      token: null,
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
  });

  it('refuses bad options at construction without echoing a token', () => {
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: { scripted: scriptedModel([]) },
      model: { provider: 'scripted', model: 'm' },
    });
    expect(() => createServer(runtime, { auth: { tokens: [{ token: 'short' }] } })).toThrow(/at least 16/);
    expect(() => createServer(runtime, { env: {} })).toThrow(/AGENTLANES_TOKENS/);
    expect(() => createServer(runtime, { env: { AGENTLANES_TOKENS: 'secret token!!!!!!!!' } })).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        message: expect.not.stringContaining('secret') as string,
      }),
    );
    expect(() => createServer(runtime, { bodyLimitBytes: 0 })).toThrow(/bodyLimitBytes/);
    const server = createServer(runtime, { env: { AGENTLANES_TOKENS: `${adminToken}, ${webToken}` } });
    expect(server.app).toBeDefined();
    return runtime.close();
  });

  it('pages a scoped token through its own keys only, with no cursor, count or error naming another key', async () => {
    const refund = defineTool({
      name: 'refund',
      description: 'Refund an order',
      risk: 'high',
      input: z.object({ orderId: z.string() }),
      execute: () => Promise.resolve({ refunded: true }),
    });
    harness = await startServer(
      (request) =>
        request.messages.some((message) => message.role === 'user' && message.content === 'refund')
          ? { toolCalls: [{ name: 'refund', args: { orderId: 'secret-order' } }] }
          : { text: 'ok' },
      { tools: [refund] },
    );
    const secretKeys = [0, 1, 2, 3, 4].map((index) => `secret:customer-${index}`);
    const webKeys = ['web:a', 'web:b', 'web:c'];
    // Keys around the web: range (';' sorts just after ':'; 'web' and 'wea…' just before it).
    const neighbours = ['web', 'wea:1', 'web;1', 'webz', 'x:1'];
    for (const key of [...secretKeys, ...webKeys, ...neighbours]) {
      await harness.request(`/v1/sessions/${key}/messages`, { method: 'POST', json: { text: 'hi' } });
      await harness.request(`/v1/sessions/${key}/wait`, { method: 'POST' });
    }
    await harness.request('/v1/sessions/secret:customer-0/messages', {
      method: 'POST',
      json: { text: 'refund' },
    });
    const paused = await harness.request('/v1/sessions/secret:customer-0/wait', { method: 'POST' });
    expect(await paused.json()).toMatchObject({ status: 'paused' });

    const seen: string[] = [];
    const cursors: string[] = [];
    let query = 'limit=1';
    for (let page = 0; page < 20; page++) {
      const response = await harness.request(`/v1/sessions?${query}`, { token: webToken });
      const text = await response.text();
      expect(text).not.toContain('secret');
      const body = JSON.parse(text) as { sessions: { key: string }[]; next?: string };
      seen.push(...body.sessions.map((session) => session.key));
      if (body.next === undefined) break;
      cursors.push(body.next);
      query = `limit=1&after=${encodeURIComponent(body.next)}`;
    }
    expect(seen).toEqual(webKeys);
    expect(cursors).toEqual(['web:a', 'web:b']);
    for (const after of ['secret:customer-0', 'a', 'web;0', 'zzz']) {
      const page = await harness.request(`/v1/sessions?limit=2&after=${encodeURIComponent(after)}`, {
        token: webToken,
      });
      const body = (await page.json()) as { sessions: { key: string }[]; next?: string };
      const expected = webKeys.filter((key) => key > after);
      expect(body.sessions.map((session) => session.key)).toEqual(expected.slice(0, 2));
      expect(body.next).toBe(expected.length > 2 ? expected[1] : undefined);
    }
    const whole = await harness.request('/v1/sessions', { token: webToken });
    expect(await whole.json()).toMatchObject({ sessions: webKeys.map((key) => ({ key })) });
    const approvals = await harness.request('/v1/approvals', { token: webToken });
    expect(await approvals.json()).toEqual({ pending: [] });
    const all = (await (await harness.request('/v1/approvals')).json()) as { pending: unknown[] };
    expect(all.pending).toHaveLength(1);

    // The same answer for a foreign key that exists and one that does not, on every session route.
    const routes: [string, string][] = [
      ['GET', ''],
      ['GET', '/queue'],
      ['GET', '/runs'],
      ['GET', '/transcript'],
      ['GET', '/events'],
      ['POST', '/messages'],
      ['POST', '/wait'],
      ['POST', '/abort'],
      ['POST', '/chat'],
      ['POST', '/plans'],
      ['POST', '/approvals/call-1'],
      ['POST', '/tool-results/call-1'],
      ['PUT', '/settings'],
      ['DELETE', '/queue'],
      ['DELETE', '/queue/m-1'],
    ];
    for (const [method, rest] of routes) {
      const answers = [];
      for (const key of ['secret:customer-0', 'secret:nobody']) {
        const response = await harness.request(`/v1/sessions/${key}${rest}`, { method, token: webToken });
        answers.push({ status: response.status, body: await response.text() });
      }
      expect(answers[0]).toEqual({
        status: 403,
        body: JSON.stringify({
          error: { code: 'forbidden', message: 'this token does not cover that session key' },
        }),
      });
      expect(answers[1]).toEqual(answers[0]);
    }
    const tickets = [];
    for (const sessionKey of ['secret:customer-0', 'secret:nobody']) {
      const response = await harness.request('/v1/stream-tickets', {
        method: 'POST',
        token: webToken,
        json: { sessionKey },
      });
      tickets.push({ status: response.status, body: await response.text() });
    }
    expect(tickets[0]?.status).toBe(403);
    expect(tickets[1]).toEqual(tickets[0]);
  });
});
