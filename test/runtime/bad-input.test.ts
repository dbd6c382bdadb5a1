import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMemoryLedger,
  createRuntime,
  defineTool,
  isRuntimeError,
  type ErrorCode,
  type RuntimeOptions,
  type Session,
} from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { createHarness, type Harness } from '../support/runtime-harness.js';

/** A slow answer: three words 100 ms apart, so a run stays busy for 200 ms. */
const slow = () => ({ text: 'slow steady answer', tokenDelayMs: 100 });

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

async function rejectionOf(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => undefined,
    (error: unknown) => error,
  );
}

function expectCode(error: unknown, code: ErrorCode): void {
  expect(isRuntimeError(error, code), `expected RuntimeError(${code}), got ${String(error)}`).toBe(true);
}

/** A harness whose session `telegram:1` runs `a` and holds `b` in its queue. */
async function busySession(): Promise<{
  h: Harness;
  chat: Session;
  ledger: ReturnType<typeof createMemoryLedger>;
}> {
  const ledger = createMemoryLedger();
  const h = createHarness(slow, { ledger, queue: { mode: 'followup' } });
  const chat = h.runtime.session('telegram:1');
  await chat.send({ id: 'a', text: 'first' });
  await chat.send({ id: 'b', text: 'second' });
  await h.clock.advance(0);
  return { h, chat, ledger };
}

/** Everything a bad call must leave as it was. */
async function observe(h: Harness, chat: Session, ledger: ReturnType<typeof createMemoryLedger>) {
  await h.clock.advance(0);
  return {
    events: h.events.length,
    inbox: await ledger.listMessages('telegram:1'),
    session: (await ledger.getSession('telegram:1'))?.override,
    queue: chat.queue.list(),
    status: chat.status(),
    live: h.runtime.stats().liveSessions,
  };
}

const valid: RuntimeOptions = {
  providers: { scripted: scriptedModel(slow) },
  model: { provider: 'scripted', model: 'm' },
};

describe('createRuntime (bad options)', () => {
  it.each<[string, unknown]>([
    ['providers are missing', { model: valid.model }],
    ['model.provider is not in providers', { ...valid, model: { provider: 'openai', model: 'gpt' } }],
    [
      'a fallback provider is not in providers',
      { ...valid, model: { ...valid.model, fallbacks: [{ provider: 'x', model: 'y' }] } },
    ],
    ['globalLane.concurrency is 0', { ...valid, globalLane: { concurrency: 0 } }],
    ['queue.debounceMs is negative', { ...valid, queue: { debounceMs: -1 } }],
    ['queue.mode is unknown', { ...valid, queue: { mode: 'shout' } }],
    ['an unknown key is given', { ...valid, colour: 'blue' }],
    ['an unknown nested key is given', { ...valid, limits: { maxToolTurn: 3 } }],
    ['systemPrompt is a number', { ...valid, systemPrompt: 5 }],
    ['a provider is not a ModelProvider', { ...valid, providers: { scripted: {} } }],
    ['hibernateAfterMs is a string', { ...valid, sessions: { hibernateAfterMs: 'soon' } }],
    ['options are missing', undefined],
  ])('throws invalid_input when %s', async (_, options) => {
    const ledger = createMemoryLedger();
    const withLedger = typeof options === 'object' ? { ...options, ledger } : options;
    expectCode(
      thrownBy(() => createRuntime(withLedger as RuntimeOptions)),
      'invalid_input',
    );
    expect(await ledger.lastCursor()).toBe(0);
    expect(await ledger.listSessions()).toEqual([]);
  });
});

describe('Runtime.session (bad keys)', () => {
  it.each<[string, unknown]>([
    ['the key is empty', ''],
    ['the key is a number', 42],
    ['the key is missing', undefined],
  ])('throws invalid_input and creates no session when %s', async (_, key) => {
    const h = createHarness(slow);
    expectCode(
      thrownBy(() => h.runtime.session(key as string)),
      'invalid_input',
    );
    expect(h.runtime.stats().liveSessions).toBe(0);
    await h.close();
    expect(h.events).toEqual([]);
  });
});

describe('Session (bad input)', () => {
  const calls: [string, (chat: Session) => Promise<unknown>][] = [
    ['send gets empty text', (chat) => chat.send({ text: '' })],
    ['send gets an empty string', (chat) => chat.send('')],
    ['send gets a number', (chat) => chat.send(42 as never)],
    ['send gets text of the wrong type', (chat) => chat.send({ text: 5 } as never)],
    ['send gets an unknown field', (chat) => chat.send({ text: 'x', colour: 'red' } as never)],
    ['send gets an empty id', (chat) => chat.send({ id: '', text: 'x' })],
    [
      'send gets a sender without a string id',
      (chat) => chat.send({ text: 'x', sender: { id: 5 } } as never),
    ],
    ['send gets a bad mode', (chat) => chat.send('x', { mode: 'shout' } as never)],
    ['send gets a negative debounceMs', (chat) => chat.send('x', { debounceMs: -1 })],
    ['send gets cap 0', (chat) => chat.send('x', { cap: 0 })],
    ['send gets a fractional maxWaitMs', (chat) => chat.send('x', { maxWaitMs: 1.5 })],
    ['send gets an unknown option', (chat) => chat.send('x', { priority: 1 } as never)],
    ['steer gets empty text', (chat) => chat.steer('')],
    ['configure gets a bad mode', (chat) => chat.configure({ mode: 'loud' } as never)],
    ['configure gets a negative debounceMs', (chat) => chat.configure({ debounceMs: -5 })],
    ['configure gets cap 0', (chat) => chat.configure({ cap: 0 })],
    ['configure gets a bad drop policy', (chat) => chat.configure({ drop: 'all' } as never)],
    ['configure gets an unknown key', (chat) => chat.configure({ unknown: true } as never)],
    ['configure gets a string', (chat) => chat.configure('followup' as never)],
    ['waitForEnd gets timeoutMs -1', (chat) => chat.waitForEnd({ timeoutMs: -1 })],
    ['waitForEnd gets timeoutMs NaN', (chat) => chat.waitForEnd({ timeoutMs: Number.NaN })],
    ['abort gets a numeric reason', (chat) => chat.abort({ reason: 5 } as never)],
    ['queue.cancel gets an empty id', (chat) => chat.queue.cancel('')],
    ['queue.cancel gets a number', (chat) => chat.queue.cancel(7 as never)],
  ];

  it.each(calls)('rejects with invalid_input and changes nothing when %s', async (_, call) => {
    const { h, chat, ledger } = await busySession();
    const before = await observe(h, chat, ledger);
    expect(before.status).toEqual({ state: 'streaming', runId: 'run_1', queued: 1 });
    expectCode(await rejectionOf(() => call(chat)), 'invalid_input');
    expect(await observe(h, chat, ledger)).toEqual(before);
    await h.close();
  });

  it('rejects a bad send to a session that is not live without hydrating it', async () => {
    const { h, chat, ledger } = await busySession();
    const before = await observe(h, chat, ledger);
    expectCode(await rejectionOf(() => h.runtime.session('telegram:2').send({ text: '' })), 'invalid_input');
    expect(await observe(h, chat, ledger)).toEqual(before);
    expect(await ledger.listMessages('telegram:2')).toEqual([]);
    await h.close();
  });
});

describe('Runtime.events and Runtime.close (bad options)', () => {
  async function firstOf(events: AsyncIterable<unknown>): Promise<unknown> {
    for await (const event of events) return event;
    return undefined;
  }

  it.each<[string, unknown]>([
    ['after is negative', { after: -1 }],
    ['after is a string', { after: 'x' }],
    ['signal is not an AbortSignal', { signal: 'stop' }],
    ['an unknown option is given', { afterCursor: 3 }],
  ])('ends the stream with invalid_input when %s', async (_, options) => {
    const { h, chat, ledger } = await busySession();
    const before = await observe(h, chat, ledger);
    expectCode(await rejectionOf(() => firstOf(h.runtime.events(options as never))), 'invalid_input');
    expectCode(await rejectionOf(() => firstOf(chat.events(options as never))), 'invalid_input');
    expect(await observe(h, chat, ledger)).toEqual(before);
    await h.close();
  });

  it.each<[string, unknown]>([
    ['timeoutMs is negative', -1],
    ['timeoutMs is a string', 'soon'],
  ])('close rejects with invalid_input and keeps running when %s', async (_, timeoutMs) => {
    const { h, chat, ledger } = await busySession();
    const before = await observe(h, chat, ledger);
    expectCode(await rejectionOf(() => h.runtime.close({ timeoutMs: timeoutMs as number })), 'invalid_input');
    expect(await observe(h, chat, ledger)).toEqual(before);
    expect(await chat.send({ id: 'c', text: 'still open' })).toMatchObject({ disposition: 'queued' });
    await h.close();
  });
});

describe('defineTool (bad definitions)', () => {
  const input = z.object({ q: z.string() });
  it.each<[string, unknown]>([
    ['the name has a space', { name: 'web search', description: 'Search', input }],
    ['the name is empty', { name: '', description: 'Search', input }],
    ['the description is missing', { name: 'search', input }],
    ['the description is empty', { name: 'search', description: '', input }],
    ['input is a JSON schema, not zod', { name: 'search', description: 'Search', input: { type: 'object' } }],
    ['risk is unknown', { name: 'search', description: 'Search', input, risk: 'extreme' }],
  ])('throws invalid_input when %s', (_, definition) => {
    expectCode(
      thrownBy(() => defineTool(definition as Parameters<typeof defineTool>[0])),
      'invalid_input',
    );
  });
});

describe('Session (after runtime.close)', () => {
  it('rejects send, steer, configure and queue calls with runtime_closed and emits nothing', async () => {
    const h = createHarness(slow);
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'first' });
    await h.close();
    const count = h.events.length;
    expectCode(await rejectionOf(() => chat.send({ id: 'b', text: 'late' })), 'runtime_closed');
    expectCode(await rejectionOf(() => chat.steer('late')), 'runtime_closed');
    expectCode(await rejectionOf(() => chat.configure({ mode: 'followup' })), 'runtime_closed');
    expectCode(await rejectionOf(() => chat.queue.clear()), 'runtime_closed');
    expectCode(await rejectionOf(() => chat.queue.cancel('a')), 'runtime_closed');
    expectCode(await rejectionOf(() => h.runtime.session('telegram:2').send('new')), 'runtime_closed');
    expect(h.events.length).toBe(count);
  });
});

describe('Session.send (refusals)', () => {
  it('answers rejected_busy instead of throwing when mode is reject and a run is active', async () => {
    const { h, chat, ledger } = await busySession();
    expect(await chat.send({ id: 'r', text: 'not now' }, { mode: 'reject' })).toEqual({
      messageId: 'r',
      disposition: 'rejected',
      code: 'rejected_busy',
    });
    await h.clock.advance(0);
    expect(h.of('message.rejected')).toMatchObject([{ messageId: 'r', code: 'rejected_busy' }]);
    expect((await ledger.listMessages('telegram:1')).map((m) => m.messageId)).toEqual(['a', 'b']);
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b']);
    await h.close();
  });

  it('answers queue_full when the queue holds cap messages and drop is new', async () => {
    const { h, chat } = await busySession();
    expect(await chat.send({ id: 'c', text: 'third' }, { cap: 1, drop: 'new' })).toEqual({
      messageId: 'c',
      disposition: 'rejected',
      code: 'queue_full',
    });
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b']);
    await h.close();
  });

  it('starts a run when mode is reject and the session is idle', async () => {
    const h = createHarness(slow);
    const chat = h.runtime.session('telegram:1');
    expect(await chat.send({ id: 'a', text: 'hi' }, { mode: 'reject' })).toMatchObject({
      disposition: 'started',
    });
    await h.close();
  });
});
