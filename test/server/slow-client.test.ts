import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { readEvents, sseMessages, startServer, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const slowClientMs = 10_000;
const session = '/v1/sessions/web:s';

/** Let real event-loop turns pass until `done` holds: how a test waits for the server without sleeping. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; !done(); turn++) {
    if (turn > 10_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A metric of the server, read from `/metrics`. */
async function metric(name: string): Promise<number> {
  const text = (await (await harness?.request('/metrics'))?.text()) ?? '';
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
}

async function post(text: string): Promise<void> {
  const response = await harness?.request(`${session}/messages`, {
    method: 'POST',
    json: { text, mode: 'followup', cap: 1, drop: 'old' },
  });
  expect(response?.status).toBe(202);
}

/**
 * Start a run that hangs (so every later message queues, one at a time), then post large messages until the
 * stream's writer holds more than the client buffer and waits: its slow-client timer is then the one timer more
 * on the clock. The socket's own buffers fill first, and their size depends on the machine.
 */
async function fillUntilWriterWaits(): Promise<void> {
  const clock = harness?.clock;
  if (clock === undefined) throw new Error('no harness');
  await post('start');
  await post('queued');
  await until(() => clock.pendingTimers() >= 3, 'the heartbeat and the queue timers are armed');
  const baseline = clock.pendingTimers();
  const text = 'x'.repeat(100_000);
  for (let sent = 0; clock.pendingTimers() === baseline; sent++) {
    if (sent > 2000) throw new Error('the writer never waited for the client');
    await post(text);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  expect(clock.pendingTimers()).toBe(baseline + 1);
}

describe('createServer: a slow client with a grace period (slowClientMs > 0)', () => {
  it('cuts a client that stops reading only once it stayed behind for slowClientMs', async () => {
    harness = await startServer([{ hang: true }], {}, { clientBufferBytes: 4096, slowClientMs });
    const stalled = await harness.request(`${session}/events`);
    expect(stalled.status).toBe(200);
    await fillUntilWriterWaits();

    await harness.clock.advance(slowClientMs - 1);
    expect(await metric('agentlanes_event_stream_slow_clients_total')).toBe(0);
    expect(await metric('agentlanes_event_stream_clients')).toBe(1);

    await harness.clock.advance(1);
    expect(await metric('agentlanes_event_stream_slow_clients_total')).toBe(1);
    await expect(stalled.arrayBuffer()).rejects.toThrow();
    expect(await metric('agentlanes_event_stream_clients')).toBe(0);
    await harness.request(`${session}/abort`, { method: 'POST' });
  });

  it('keeps a client that reads again within slowClientMs, and it gets every frame with no gap', async () => {
    harness = await startServer([{ hang: true }], {}, { clientBufferBytes: 4096, slowClientMs });
    const { clock } = harness;
    const stalled = sseMessages(await harness.request(`${session}/events`));
    await fillUntilWriterWaits();
    const waiting = clock.pendingTimers();

    await clock.advance(slowClientMs - 1);
    await post('caught up');
    const received = (text: string) => (event: RuntimeEvent) =>
      event.type === 'message.received' && event.text === text;
    const read = await readEvents(stalled, received('caught up'));
    // The client drained the buffer: the writer dropped its slow-client timer, so more time cuts nothing.
    await until(() => clock.pendingTimers() < waiting, 'the slow-client timer is cleared');
    await clock.advance(slowClientMs);
    expect(await metric('agentlanes_event_stream_slow_clients_total')).toBe(0);
    expect(await metric('agentlanes_event_stream_clients')).toBe(1);
    await post('still here');
    const live = await readEvents(stalled, received('still here'));
    await stalled.return?.();

    // Every event the ledger holds up to the same point, in order: nothing lost while the client was behind.
    const replay = sseMessages(await harness.request(`${session}/events`));
    const whole = await readEvents(replay, received('still here'));
    await replay.return?.();
    const streamed = [...read.events, ...live.events];
    expect(streamed.map((event) => event.cursor)).toEqual(whole.events.map((event) => event.cursor));
    expect(streamed).toEqual(whole.events);
    expect(read.events.length).toBeGreaterThan(50);
    await harness.request(`${session}/abort`, { method: 'POST' });
  });
});
