import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { readEvents, sseMessages, startServer, webToken, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const endsRun = (event: RuntimeEvent) => event.type === 'run.ended';

describe('createServer: event streams', () => {
  it('streams replayed then live events with their cursor as id, retry advice and heartbeats on the clock', async () => {
    harness = await startServer(
      [{ text: 'first answer' }, { text: 'second answer' }],
      {},
      { heartbeatMs: 15_000 },
    );
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'one' } });
    await harness.request('/v1/sessions/web:1/wait', { method: 'POST' });

    const seen = { comments: [] as string[], retries: [] as number[] };
    const response = await harness.request('/v1/sessions/web:1/events');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = sseMessages(response, seen);
    const replayed = await readEvents(messages, endsRun);
    expect(replayed.events[0]).toMatchObject({ type: 'message.received', text: 'one' });
    expect(replayed.ids).toEqual(replayed.events.map((event) => String(event.cursor)));
    expect(seen.retries).toEqual([2000]);

    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'two' } });
    const live = await readEvents(messages, endsRun);
    expect(live.events[0]).toMatchObject({ type: 'message.received', text: 'two' });
    expect(live.events.at(-1)).toMatchObject({
      type: 'run.ended',
      status: 'completed',
      text: 'second answer',
    });
    const cursors = [...replayed.events, ...live.events].map((event) => event.cursor);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(cursors.length);

    expect(seen.comments).toEqual([]);
    await harness.clock.advance(15_000);
    // The heartbeat arrives as a comment; the next frame read proves it was parsed before it.
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'three' } });
    await readEvents(messages, (event) => event.type === 'message.received');
    expect(seen.comments).toEqual(['heartbeat']);
    await messages.return?.();
  });

  it('follows every session the token covers on /v1/events, from ?after=', async () => {
    harness = await startServer([{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    await harness.request('/v1/sessions/telegram:1/messages', { method: 'POST', json: { text: 'tg' } });
    await harness.request('/v1/sessions/telegram:1/wait', { method: 'POST' });
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'web' } });
    await harness.request('/v1/sessions/web:1/wait', { method: 'POST' });
    const all = await readEvents(
      sseMessages(await harness.request('/v1/events')),
      (event) => event.type === 'run.ended' && event.sessionKey === 'web:1',
    );
    expect(new Set(all.events.map((event) => event.sessionKey))).toEqual(new Set(['telegram:1', 'web:1']));

    const scoped = sseMessages(await harness.request('/v1/events', { token: webToken }));
    const web = await readEvents(scoped, endsRun);
    expect(new Set(web.events.map((event) => event.sessionKey))).toEqual(new Set(['web:1']));
    await scoped.return?.();

    const middle = all.events[3] as RuntimeEvent;
    const after = sseMessages(await harness.request(`/v1/events?after=${middle.cursor}&types=run.ended`));
    const ended = await readEvents(after, (event) => event.sessionKey === 'web:1');
    expect(ended.events.map((event) => [event.type, event.sessionKey])).toEqual([
      ['run.ended', 'telegram:1'],
      ['run.ended', 'web:1'],
    ]);
    await after.return?.();
  });

  it('resumes with Last-Event-ID across a server restart on the same SQLite file, with no gap and no repeat', async () => {
    const path = tempLedgerPath('server');
    let counter = 0;
    const ids = (prefix: string) => `${prefix}_${++counter}`;
    harness = await startServer([{ text: 'one two three four five' }], { ledger: { path }, ids });
    const { clock } = harness;
    await harness.request('/v1/sessions/web:r/messages', { method: 'POST', json: { text: 'first' } });
    await harness.request('/v1/sessions/web:r/wait', { method: 'POST' });
    const firstStream = sseMessages(await harness.request('/v1/sessions/web:r/events'));
    const before = await readEvents(firstStream, (event) => event.type === 'assistant.delta');
    await firstStream.return?.();
    await harness.close();

    harness = await startServer([{ text: 'again' }], { ledger: { path }, ids }, {}, { clock });
    const lastId = before.ids.at(-1) as string;
    const resumed = sseMessages(
      await harness.request('/v1/sessions/web:r/events', { headers: { 'last-event-id': lastId } }),
    );
    await harness.request('/v1/sessions/web:r/messages', { method: 'POST', json: { text: 'second' } });
    const after = await readEvents(resumed, (event) => event.type === 'run.ended' && event.text === 'again');
    await resumed.return?.();

    const everything = sseMessages(await harness.request('/v1/sessions/web:r/events?after=0'));
    const whole = await readEvents(
      everything,
      (event) => event.type === 'run.ended' && event.text === 'again',
    );
    await everything.return?.();
    const joined = [...before.events, ...after.events];
    expect(joined.map((event) => event.cursor)).toEqual(whole.events.map((event) => event.cursor));
    expect(joined).toEqual(whole.events);
    expect(before.events.length).toBeGreaterThan(1);
    expect(after.events.length).toBeGreaterThan(before.events.length);
  });

  it('ends open streams with a final frame when the server closes, and the runtime stays open', async () => {
    harness = await startServer([{ text: 'still here' }]);
    const stream = sseMessages(await harness.request('/v1/events'));
    const pending = stream.next();
    await harness.server.close();
    expect((await pending).value).toEqual({ event: 'close', data: '{"reason":"shutdown"}', id: undefined });
    expect((await stream.next()).done).toBe(true);
    const result = await harness.runtime.session('web:1').send('hi');
    expect(result.disposition).toBe('started');
  });

  it('cuts a client that stops reading once its buffer is full, while sends keep being answered', async () => {
    harness = await startServer([{ hang: true }], {}, { clientBufferBytes: 4096, slowClientMs: 0 });
    const stalled = await harness.request('/v1/sessions/web:s/events');
    expect(stalled.status).toBe(200);
    const text = 'x'.repeat(100_000);
    let sent = 0;
    const slowClients = async () => {
      const metrics = await (await harness?.request('/metrics'))?.text();
      return Number(/agentlanes_event_stream_slow_clients_total (\d+)/.exec(metrics ?? '')?.[1]);
    };
    // The socket's buffers fill first (their size depends on the machine): send until the server cut the client.
    while ((await slowClients()) === 0 && sent < 2000) {
      const response = await harness.request('/v1/sessions/web:s/messages', {
        method: 'POST',
        json: { text, mode: 'followup', cap: 1, drop: 'old' },
      });
      expect(response.status).toBe(202);
      sent += 1;
    }
    expect(await slowClients()).toBe(1);
    await expect(stalled.arrayBuffer()).rejects.toThrow();
    const metrics = await (await harness.request('/metrics')).text();
    expect(metrics).toContain('agentlanes_event_stream_clients 0');
    await harness.request('/v1/sessions/web:s/abort', { method: 'POST' });
  });
});
