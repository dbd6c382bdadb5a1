import { describe, expect, it } from 'vitest';
import { createMemoryLedger, isRuntimeError, type Ledger, type QueueMode } from 'agentlanes';
import type { ScriptEntry } from 'agentlanes/testing';
import { errorOf } from '../support/error-of.js';
import { createHarness, type Harness } from '../support/runtime-harness.js';

/** A memory ledger whose next `appendMessage` calls fail (as a full disk would), `failures` of them. */
function flakyLedger() {
  const inner = createMemoryLedger();
  const state = { failures: 0, diskFull: new Error('SQLITE_FULL: database or disk is full') };
  const ledger: Ledger = {
    ...inner,
    appendMessage: (record) => {
      if (state.failures === 0) return inner.appendMessage(record);
      state.failures -= 1;
      return Promise.reject(state.diskFull);
    },
  };
  return { inner, ledger, state };
}

// The first run streams for 200 ms; every later run answers at once.
const script = (): ScriptEntry[] => [
  { text: 'one two three', tokenDelayMs: 100 },
  ...Array.from({ length: 6 }, () => ({ text: 'ok' })),
];

/** Everything a failed admission must leave as it was. */
async function observe(h: Harness, inner: Ledger) {
  await h.clock.advance(0);
  const chat = h.runtime.session('telegram:1');
  return {
    events: h.events.map((event) => event.type),
    inbox: await inner.listMessages('telegram:1'),
    status: chat.status(),
    queue: chat.queue.list(),
  };
}

const busyCases: [QueueMode, string, Record<string, unknown>][] = [
  ['followup', 'queued', { position: 1 }],
  ['collect', 'collected', { position: 1 }],
  ['steer', 'steered', { runId: 'run_1' }],
  ['steer-backlog', 'steered', { runId: 'run_1', position: 1 }],
  ['interrupt', 'interrupted', { position: 1 }],
];

describe('Session.send when the inbox write fails', () => {
  it('rejects with ledger_unavailable and changes nothing when the session is idle', async () => {
    const { inner, ledger, state } = flakyLedger();
    const h = createHarness(script(), { ledger });
    const chat = h.runtime.session('telegram:1');
    const before = await observe(h, inner);
    state.failures = 1;
    const error = await errorOf(chat.send({ id: 'a', text: 'hi' }));
    expect(isRuntimeError(error, 'ledger_unavailable')).toBe(true);
    expect((error as Error).cause).toBe(state.diskFull);
    expect(await observe(h, inner)).toEqual(before);
    expect(h.model.requests).toEqual([]);
    // The retry is a new message, not a duplicate.
    expect(await chat.send({ id: 'a', text: 'hi' })).toEqual({
      messageId: 'a',
      disposition: 'started',
      runId: 'run_1',
    });
    await h.clock.advance(1_000);
    expect((await inner.listMessages('telegram:1')).map((record) => record.messageId)).toEqual(['a']);
    expect(h.of('message.received').map((event) => event.messageId)).toEqual(['a']);
    await h.close();
  });

  it.each(busyCases)(
    'rejects and changes nothing, then accepts the retry, when the session is busy and the mode is %s',
    async (mode, disposition, extra) => {
      const { inner, ledger, state } = flakyLedger();
      const h = createHarness(script(), { ledger });
      const chat = h.runtime.session('telegram:1');
      await chat.send({ id: 'a', text: 'first' });
      await h.clock.advance(0);
      const before = await observe(h, inner);
      state.failures = 1;
      const error = await errorOf(chat.send({ id: 'b', text: 'second' }, { mode }));
      expect(isRuntimeError(error, 'ledger_unavailable')).toBe(true);
      expect(await observe(h, inner)).toEqual(before);
      expect(await chat.send({ id: 'b', text: 'second' }, { mode })).toEqual({
        messageId: 'b',
        disposition,
        ...extra,
      });
      expect((await inner.listMessages('telegram:1')).map((record) => record.messageId)).toEqual(['a', 'b']);
      await h.clock.advance(10_000);
      expect(h.of('message.received').map((event) => event.messageId)).toEqual(['a', 'b']);
      await h.close();
    },
  );

  it('accepts the same id sent again after a restart when its first write failed', async () => {
    const { ledger, state } = flakyLedger();
    const first = createHarness(script(), { ledger });
    state.failures = 1;
    await errorOf(first.runtime.session('telegram:1').send({ id: 'a', text: 'hi' }));
    await first.close();
    const second = createHarness(script(), { ledger });
    const result = await second.runtime.session('telegram:1').send({ id: 'a', text: 'hi' });
    expect(result).toMatchObject({ messageId: 'a', disposition: 'started' });
    await second.close();
  });
});

describe('Session.send when two sends of one session overlap', () => {
  it('answers the second duplicate when the same id is sent twice at once', async () => {
    const { ledger } = flakyLedger();
    const h = createHarness(script(), { ledger });
    const chat = h.runtime.session('telegram:1');
    const [one, two] = await Promise.all([
      chat.send({ id: 'a', text: 'hi' }),
      chat.send({ id: 'a', text: 'hi' }),
    ]);
    expect(one.disposition).toBe('started');
    expect(two.disposition).toBe('duplicate');
    await h.close();
  });

  it('accepts the second of two simultaneous sends of one id when the first write fails', async () => {
    const { inner, ledger, state } = flakyLedger();
    const h = createHarness(script(), { ledger });
    const chat = h.runtime.session('telegram:1');
    state.failures = 1;
    const [one, two] = await Promise.allSettled([
      chat.send({ id: 'a', text: 'hi' }),
      chat.send({ id: 'a', text: 'hi' }),
    ]);
    expect(one.status).toBe('rejected');
    expect(two).toMatchObject({ status: 'fulfilled', value: { disposition: 'started' } });
    expect((await inner.listMessages('telegram:1')).map((record) => record.order)).toEqual([1]);
    await h.close();
  });

  it('keeps arrival order when several messages are sent at once to a busy session', async () => {
    const { inner, ledger } = flakyLedger();
    const h = createHarness(script(), { ledger, queue: { mode: 'followup' } });
    const chat = h.runtime.session('telegram:1');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((id) => chat.send({ id, text: `text ${id}` })),
    );
    expect(results.map((result) => result.disposition)).toEqual(['started', 'queued', 'queued', 'queued']);
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b', 'c', 'd']);
    const inbox = await inner.listMessages('telegram:1');
    expect(inbox.map((record) => [record.messageId, record.order])).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ]);
    await h.close();
  });
});
