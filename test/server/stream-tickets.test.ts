import { afterEach, describe, expect, it } from 'vitest';
import { readEvents, sseMessages, startServer, webToken, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Ask for a ticket with `token` (the web token by default) for `sessionKey`'s stream. */
async function ticketFor(
  sessionKey?: string,
  token = webToken,
): Promise<{ ticket: string; expiresAt: number }> {
  const response = await harness!.request('/v1/stream-tickets', {
    method: 'POST',
    token,
    json: sessionKey === undefined ? {} : { sessionKey },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { ticket: string; expiresAt: number };
}

/** Open a stream with a ticket and no token. */
function openWith(path: string, ticket: string, init: RequestInit = {}): Promise<Response> {
  const separator = path.includes('?') ? '&' : '?';
  return harness!.request(`${path}${separator}ticket=${encodeURIComponent(ticket)}`, {
    ...init,
    token: null,
  });
}

/** Let event-loop turns pass until the server holds no open event stream (it noticed the client left). */
async function untilStreamsClosed(): Promise<void> {
  for (let turn = 0; turn < 1000; turn++) {
    const stats = (await (await harness!.request('/v1/stats')).json()) as { eventStreams: { open: number } };
    if (stats.eventStreams.open === 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error('an event stream stayed open');
}

describe('POST /v1/stream-tickets', () => {
  it('issues a random ticket for 60 s that opens only its own stream, once at a time', async () => {
    harness = await startServer([{ text: 'one' }, { text: 'two' }]);
    const { ticket, expiresAt } = await ticketFor('web:1');
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expiresAt).toBe(harness.clock.now() + 60_000);
    expect((await ticketFor('web:1')).ticket).not.toBe(ticket);

    // Never a credential on another route, nor on another stream; trying does not spend it.
    for (const [method, path] of [
      ['GET', '/v1/sessions/web:1'],
      ['GET', '/v1/sessions'],
      ['GET', '/v1/approvals'],
      ['POST', '/v1/sessions/web:1/messages'],
      ['POST', '/v1/stream-tickets'],
      ['GET', '/v1/events'],
      ['GET', '/v1/sessions/web:2/events'],
    ] as const) {
      const response = await openWith(path, ticket, { method });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }

    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'hi' } });
    await harness.request('/v1/sessions/web:1/wait', { method: 'POST' });
    const first = new AbortController();
    const opened = await openWith('/v1/sessions/web:1/events', ticket, { signal: first.signal });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('cache-control')).toBe('no-store');
    const { events, ids } = await readEvents(sseMessages(opened), (event) => event.type === 'run.ended');
    expect(events.every((event) => event.sessionKey === 'web:1')).toBe(true);

    // In use: a second connection with the same ticket is refused.
    expect((await openWith('/v1/sessions/web:1/events', ticket)).status).toBe(401);
    first.abort();
    await untilStreamsClosed();

    // Its reconnect (the same URL and Last-Event-ID) resumes after the last event, within the window.
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'again' } });
    await harness.request('/v1/sessions/web:1/wait', { method: 'POST' });
    const second = new AbortController();
    const resumed = await openWith('/v1/sessions/web:1/events', ticket, {
      signal: second.signal,
      headers: { 'last-event-id': ids.at(-1) ?? '' },
    });
    expect(resumed.status).toBe(200);
    const more = await readEvents(sseMessages(resumed), (event) => event.type === 'run.ended');
    expect(Number(more.ids[0])).toBe(Number(ids.at(-1)) + 1);
    second.abort();
    await untilStreamsClosed();

    // After the reconnect window, the ticket is gone for good.
    await harness.clock.advance(60_001);
    expect((await openWith('/v1/sessions/web:1/events', ticket)).status).toBe(401);
  });

  it('refuses a ticket past its lifetime, a made-up one, and a ticket beside a bearer token it ignores', async () => {
    harness = await startServer([]);
    const late = await ticketFor();
    await harness.clock.advance(60_000);
    expect((await openWith('/v1/events', late.ticket)).status).toBe(401);
    expect((await openWith('/v1/events', 'A'.repeat(43))).status).toBe(401);
    expect((await openWith('/v1/events', '')).status).toBe(401);
    const fresh = await ticketFor();
    const withWrongToken = await harness.request(`/v1/events?ticket=${fresh.ticket}`, {
      token: 'wrong-token-0123456789',
    });
    expect(withWrongToken.status).toBe(401);
    const controller = new AbortController();
    const stream = await openWith('/v1/events', fresh.ticket, { signal: controller.signal });
    expect(stream.status).toBe(200);
    controller.abort();
  });

  it('binds a ticket to the scope of its token and grants it reading only', async () => {
    harness = await startServer([{ text: 'secret answer' }, { text: 'web answer' }]);
    await harness.request('/v1/sessions/secret:1/messages', { method: 'POST', json: { text: 'hi' } });
    await harness.request('/v1/sessions/secret:1/wait', { method: 'POST' });
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'hi' } });
    await harness.request('/v1/sessions/web:1/wait', { method: 'POST' });
    const denied = await harness.request('/v1/stream-tickets', {
      method: 'POST',
      token: webToken,
      json: { sessionKey: 'secret:1' },
    });
    expect(denied.status).toBe(403);
    const { ticket } = await ticketFor();
    const controller = new AbortController();
    const stream = await openWith('/v1/events?after=0', ticket, { signal: controller.signal });
    const { events } = await readEvents(sseMessages(stream), (event) => event.type === 'run.ended');
    expect(new Set(events.map((event) => event.sessionKey))).toEqual(new Set(['web:1']));
    controller.abort();
  });
});
