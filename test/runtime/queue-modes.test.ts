import { describe, expect, it } from 'vitest';
import type { QueueMode, RuntimeOptions } from 'agentlanes';
import type { ScriptEntry } from 'agentlanes/testing';
import { createHarness, type Harness } from '../support/runtime-harness.js';

// A first run that streams for 20 ms (tokens at 0, 10 and 20), then quick answers for every later run.
const slow: ScriptEntry = { text: 'one two three', tokenDelayMs: 10 };
const script = (): ScriptEntry[] => [slow, ...Array.from({ length: 6 }, () => ({ text: 'ok' }))];

function busyHarness(options: Partial<RuntimeOptions> = {}) {
  const h = createHarness(script(), options);
  return { h, chat: h.runtime.session('telegram:1') };
}

const started = (h: Harness) => h.of('run.started').map((event) => [event.runId, event.messageIds, event.at]);

describe('Session.send', () => {
  it.each<QueueMode>(['steer', 'followup', 'queue', 'collect', 'steer-backlog', 'interrupt', 'reject'])(
    'starts a run when the session is idle and the mode is %s',
    async (mode) => {
      const { h, chat } = busyHarness();
      expect(await chat.send({ id: 'a', text: 'hi' }, { mode })).toEqual({
        messageId: 'a',
        disposition: 'started',
        runId: 'run_1',
      });
      expect(chat.status()).toMatchObject({ runId: 'run_1', queued: 0 });
      await h.clock.advance(20);
      expect(started(h)).toEqual([['run_1', ['a'], 0]]);
      await h.close();
    },
  );

  it('steers into the running run and queues nothing when the mode is steer', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send({ id: 'b', text: 'metric please' }, { mode: 'steer' })).toEqual({
      messageId: 'b',
      disposition: 'steered',
      runId: 'run_1',
    });
    expect(chat.queue.list()).toEqual([]);
    await h.clock.advance(10_000);
    expect(started(h)).toEqual([['run_1', ['a'], 0]]);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'metric please' });
    await h.close();
  });

  it.each<QueueMode>(['followup', 'queue'])(
    'queues one later run per message in FIFO order when the mode is %s',
    async (mode) => {
      const { h, chat } = busyHarness();
      await chat.send({ id: 'a', text: 'hi' });
      expect(await chat.send({ id: 'b', text: 'first' }, { mode })).toEqual({
        messageId: 'b',
        disposition: 'queued',
        position: 1,
      });
      expect(await chat.send({ id: 'c', text: 'second' }, { mode })).toEqual({
        messageId: 'c',
        disposition: 'queued',
        position: 2,
      });
      expect(chat.queue.list().map((item) => item.mode)).toEqual(['followup', 'followup']);
      await h.clock.advance(1000);
      expect(started(h)).toEqual([
        ['run_1', ['a'], 0],
        ['run_2', ['b'], 1000],
        ['run_3', ['c'], 1000],
      ]);
      expect(h.model.requests.map((request) => request.messages.at(-1)?.content)).toEqual([
        'hi',
        'first',
        'second',
      ]);
      await h.close();
    },
  );

  it('merges the queued messages into one run when the mode is collect', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send({ id: 'b', text: 'first' }, { mode: 'collect' })).toMatchObject({
      disposition: 'collected',
      position: 1,
    });
    expect(await chat.send({ id: 'c', text: 'second' }, { mode: 'collect' })).toMatchObject({
      disposition: 'collected',
      position: 2,
    });
    await h.clock.advance(1000);
    expect(started(h)).toEqual([
      ['run_1', ['a'], 0],
      ['run_2', ['b', 'c'], 1000],
    ]);
    await h.close();
  });

  it('steers into the running run and also queues a followup when the mode is steer-backlog', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send({ id: 'b', text: 'also this' }, { mode: 'steer-backlog' })).toEqual({
      messageId: 'b',
      disposition: 'steered',
      runId: 'run_1',
      position: 1,
    });
    expect(chat.queue.list()).toEqual([
      { messageId: 'b', text: 'also this', mode: 'followup', enqueuedAt: 0 },
    ]);
    await h.clock.advance(1000);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'also this' });
    expect(started(h)).toEqual([
      ['run_1', ['a'], 0],
      ['run_2', ['b'], 1000],
    ]);
    await h.close();
  });

  it('aborts the active run and runs the message ahead of the queue when the mode is interrupt', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'later' }, { mode: 'followup' });
    await h.clock.advance(5);
    expect(await chat.send({ id: 'c', text: 'stop, do this' }, { mode: 'interrupt' })).toEqual({
      messageId: 'c',
      disposition: 'interrupted',
      position: 1,
    });
    await h.clock.advance(1000);
    expect(h.of('run.ended').map((event) => [event.runId, event.status, event.text])).toEqual([
      ['run_1', 'interrupted', 'one'],
      ['run_2', 'completed', 'ok'],
      ['run_3', 'completed', 'ok'],
    ]);
    expect(started(h)).toEqual([
      ['run_1', ['a'], 0],
      ['run_2', ['c'], 5],
      // The interrupting message counts as the last enqueued one: quiet for 1000 ms from t=5.
      ['run_3', ['b'], 1005],
    ]);
    await h.close();
  });

  it('refuses the message with rejected_busy and stores nothing when the mode is reject', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send({ id: 'b', text: 'nope' }, { mode: 'reject' })).toEqual({
      messageId: 'b',
      disposition: 'rejected',
      code: 'rejected_busy',
    });
    expect(chat.status().queued).toBe(0);
    await h.clock.advance(10_000);
    expect(started(h)).toEqual([['run_1', ['a'], 0]]);
    expect(h.of('message.rejected').map((event) => [event.messageId, event.code])).toEqual([
      ['b', 'rejected_busy'],
    ]);
    // A refused id was never accepted, so the same id may come again.
    expect(await chat.send({ id: 'b', text: 'now' })).toMatchObject({ disposition: 'started' });
    await h.close();
  });

  it('treats the session as busy when it is idle but a queue waits for its drain', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'first' }, { mode: 'followup' });
    await h.clock.advance(20);
    expect(chat.status()).toEqual({ state: 'idle', queued: 1 });
    expect(await chat.send({ id: 'c', text: 'busy?' }, { mode: 'reject' })).toMatchObject({
      disposition: 'rejected',
      code: 'rejected_busy',
    });
    expect(await chat.send({ id: 'd', text: 'second' }, { mode: 'followup' })).toMatchObject({
      disposition: 'queued',
      position: 2,
    });
    await h.close();
  });
});

describe('QueueSettings precedence', () => {
  const dispositionOf = async (options: Partial<RuntimeOptions>, act?: (h: Harness) => Promise<void>) => {
    const { h, chat } = busyHarness(options);
    await act?.(h);
    await chat.send({ id: 'a', text: 'hi' });
    const result = await chat.send({ id: 'b', text: 'next' });
    await h.close();
    return result.disposition;
  };

  it('collects when no layer sets a mode', async () => {
    expect(await dispositionOf({})).toBe('collected');
  });

  it('uses the runtime default when no channel, session or message sets a mode', async () => {
    expect(await dispositionOf({ queue: { mode: 'followup' } })).toBe('queued');
  });

  it("uses the channel default over the runtime default when the key's channel has one", async () => {
    const queue = { mode: 'followup' as const, byChannel: { telegram: { mode: 'reject' as const } } };
    expect(await dispositionOf({ queue })).toBe('rejected');
    const { h } = busyHarness({ queue });
    const other = h.runtime.session('discord:1');
    await other.send({ id: 'a', text: 'hi' });
    expect(await other.send({ id: 'b', text: 'next' })).toMatchObject({ disposition: 'queued' });
    await h.close();
  });

  it('uses the session override over the channel default when configure set a mode', async () => {
    const queue = { byChannel: { telegram: { mode: 'reject' as const } } };
    const configure = (h: Harness) => h.runtime.session('telegram:1').configure({ mode: 'followup' });
    expect(await dispositionOf({ queue }, configure)).toBe('queued');
  });

  it('uses the message option over the session override when send is given a mode', async () => {
    const { h, chat } = busyHarness({ queue: { byChannel: { telegram: { mode: 'reject' } } } });
    await chat.configure({ mode: 'followup' });
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send({ id: 'b', text: 'x' }, { mode: 'collect' })).toMatchObject({
      disposition: 'collected',
    });
    await h.close();
  });

  it('resolves each field on its own when layers set different fields', async () => {
    const { h, chat } = busyHarness({ queue: { mode: 'followup', debounceMs: 300 } });
    await chat.configure({ debounceMs: 2000 });
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send({ id: 'b', text: 'x' })).toMatchObject({ disposition: 'queued' });
    await h.clock.advance(1999);
    expect(h.of('run.started')).toHaveLength(1);
    await h.clock.advance(1);
    expect(started(h).at(-1)).toEqual(['run_2', ['b'], 2000]);
    await h.close();
  });
});

describe("Session.send with mode 'collect'", () => {
  it('never merges messages of different threads into one run when they queue together', async () => {
    const { h, chat } = busyHarness();
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'one', thread: 't1' });
    await chat.send({ id: 'c', text: 'two', thread: 't1' });
    await chat.send({ id: 'd', text: 'three', thread: 't2' });
    await chat.send({ id: 'e', text: 'four', thread: 't1' });
    await h.clock.advance(1000);
    expect(started(h).map(([runId, messageIds]) => [runId, messageIds])).toEqual([
      ['run_1', ['a']],
      ['run_2', ['b', 'c']],
      ['run_3', ['d']],
      ['run_4', ['e']],
    ]);
    expect(h.model.requests[2]?.messages.at(-1)?.content).toBe('three');
    await h.close();
  });
});

describe('Session.queue', () => {
  it('lists and cancels queued messages with a message.dropped event when some are cancelled', async () => {
    const { h, chat } = busyHarness({ queue: { mode: 'followup' } });
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'one' });
    await h.clock.advance(3);
    await chat.send({ id: 'c', text: 'two' });
    await chat.send({ id: 'd', text: 'three' });
    expect(chat.queue.list()).toEqual([
      { messageId: 'b', text: 'one', mode: 'followup', enqueuedAt: 0 },
      { messageId: 'c', text: 'two', mode: 'followup', enqueuedAt: 3 },
      { messageId: 'd', text: 'three', mode: 'followup', enqueuedAt: 3 },
    ]);
    expect(await chat.queue.cancel('c')).toBe(true);
    expect(await chat.queue.cancel('c')).toBe(false);
    expect(await chat.queue.cancel('a')).toBe(false);
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b', 'd']);
    await h.clock.advance(2000);
    expect(started(h).map(([runId, messageIds]) => [runId, messageIds])).toEqual([
      ['run_1', ['a']],
      ['run_2', ['b']],
      ['run_3', ['d']],
    ]);
    expect(h.of('message.dropped').map((event) => [event.messageId, event.reason])).toEqual([
      ['c', 'cancelled'],
    ]);
    await h.close();
  });

  it('clears the queue and runs nothing more when the queue is waiting for its drain', async () => {
    const { h, chat } = busyHarness({ queue: { mode: 'followup' } });
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'one' });
    await chat.send({ id: 'c', text: 'two' });
    await h.clock.advance(20);
    expect(chat.status()).toEqual({ state: 'idle', queued: 2 });
    expect(await chat.queue.clear()).toBe(2);
    expect(await chat.queue.clear()).toBe(0);
    expect(chat.status()).toEqual({ state: 'idle', queued: 0 });
    await h.clock.advance(10_000);
    expect(started(h)).toEqual([['run_1', ['a'], 0]]);
    expect(h.of('message.dropped').map((event) => [event.messageId, event.reason])).toEqual([
      ['b', 'cleared'],
      ['c', 'cleared'],
    ]);
    await h.close();
  });
});
