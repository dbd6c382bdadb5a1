import { afterEach, describe, expect, it } from 'vitest';
import { readEvents, sseMessages, startServer, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A harness whose log holds one finished run of `web:1`; the log's last cursor. */
async function oneRun(): Promise<number> {
  harness = await startServer([{ text: 'first answer' }, { text: 'second answer' }]);
  await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'one' } });
  await harness.request('/v1/sessions/web:1/wait', { method: 'POST' });
  return harness.runtime.eventCursor();
}

describe('createServer: a cursor past the end of the log', () => {
  it('answers 400 invalid_input when Last-Event-ID or ?after= is past the end of the log', async () => {
    const last = await oneRun();
    const server = harness as ServerHarness;
    for (const response of [
      await server.request('/v1/events', { headers: { 'last-event-id': String(last + 1) } }),
      await server.request(`/v1/events?after=${last + 1000}`),
      await server.request('/v1/sessions/web:1/events', { headers: { 'last-event-id': String(last + 7) } }),
      await server.request(`/v1/sessions/web:1/events?after=${last + 1}`),
    ]) {
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'invalid_input' } });
    }
  });

  it('streams what comes next when the cursor is the end of the log', async () => {
    const last = await oneRun();
    const server = harness as ServerHarness;
    const response = await server.request('/v1/sessions/web:1/events', {
      headers: { 'last-event-id': String(last) },
    });
    expect(response.status).toBe(200);
    const messages = sseMessages(response);
    await server.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'two' } });
    const live = await readEvents(messages, (event) => event.type === 'message.received');
    expect(live.events).toMatchObject([{ type: 'message.received', text: 'two', cursor: last + 1 }]);
    await messages.return?.();
  });
});
