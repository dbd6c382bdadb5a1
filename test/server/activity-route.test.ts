import { afterEach, describe, expect, it } from 'vitest';
import { readEvents, sseMessages, startServer, webToken, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

interface Activity {
  now: number;
  cursor: number;
  events: { at: number; type: string; sessionKey: string }[];
}

async function activity(path = '/v1/activity'): Promise<Activity> {
  const response = await (harness as ServerHarness).request(path);
  expect(response.status).toBe(200);
  return (await response.json()) as Activity;
}

describe('GET /v1/activity', () => {
  it('answers the events of the last minutes and the cursor the stream goes on from when a page opens', async () => {
    harness = await startServer([{ text: 'first' }, { text: 'second' }]);
    await harness.request('/v1/sessions/web:a/messages', { method: 'POST', json: { text: 'hi' } });
    await readEvents(
      sseMessages(await harness.request('/v1/sessions/web:a/events')),
      (event) => event.type === 'run.ended',
    );
    await harness.clock.advance(120_000);
    await harness.request('/v1/sessions/web:b/messages', { method: 'POST', json: { text: 'hi' } });
    await readEvents(
      sseMessages(await harness.request('/v1/sessions/web:b/events')),
      (event) => event.type === 'run.ended',
    );

    const recent = await activity();
    expect(recent.now).toBe(harness.clock.now());
    expect(
      recent.events.filter((event) => event.type === 'message.received').map((event) => event.sessionKey),
    ).toEqual(['web:a', 'web:b']);
    // The last minute holds only the second chat's events.
    const lastMinute = await activity('/v1/activity?seconds=60');
    expect(new Set(lastMinute.events.map((event) => event.sessionKey))).toEqual(new Set(['web:b']));
    expect(lastMinute.events.every((event) => event.at >= recent.now - 60_000)).toBe(true);

    // Following from the cursor brings the next event and nothing recorded before it.
    const stream = sseMessages(await harness.request(`/v1/events?after=${recent.cursor}`));
    await harness.request('/v1/sessions/web:c/messages', { method: 'POST', json: { text: 'hi' } });
    const {
      events: [next],
    } = await readEvents(stream, () => true);
    expect(next).toMatchObject({ type: 'message.received', sessionKey: 'web:c' });
  });

  it('refuses a token scoped to some sessions and a look back past five minutes', async () => {
    harness = await startServer([]);
    expect((await harness.request('/v1/activity', { token: webToken })).status).toBe(403);
    expect((await harness.request('/v1/activity?seconds=301')).status).toBe(400);
    expect((await harness.request('/v1/activity', { token: null })).status).toBe(401);
  });
});
