import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMemoryLedger,
  createRuntime,
  defineTool,
  isRuntimeError,
  type RuntimeOptions,
} from 'agentlanes';
import { anthropicProvider } from 'agentlanes/anthropic';
import { openaiProvider } from 'agentlanes/openai';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { createSystemClock } from '../../src/core/clock.js';
import { errorOf } from '../support/error-of.js';
import { createHarness } from '../support/runtime-harness.js';

const year = 365 * 24 * 3_600_000;
const tool = { name: 'work', description: 'Work', input: z.object({}), execute: () => 'done' };

function base(overrides: Record<string, unknown> = {}): RuntimeOptions {
  return {
    ledger: createMemoryLedger(),
    providers: { scripted: scriptedModel([{ text: 'ok' }], { clock: fakeClock() }) },
    model: { provider: 'scripted', model: 'm' },
    clock: fakeClock(),
    ...overrides,
  };
}

/** The message of the invalid_input error `createRuntime` throws for `options`. */
function refusal(options: RuntimeOptions): string {
  try {
    createRuntime(options)
      .close()
      .catch(() => undefined);
  } catch (error) {
    expect(isRuntimeError(error, 'invalid_input'), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected createRuntime to refuse the options');
}

describe('createRuntime options', () => {
  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])(
    'refuses model.provider %s when it is not an own key of providers',
    (name) => {
      expect(refusal(base({ model: { provider: name, model: 'm' } }))).toContain(`"${name}"`);
    },
  );

  it('refuses a fallback or an auth profile naming an inherited provider name', () => {
    const fallback = { provider: 'scripted', model: 'm', fallbacks: [{ provider: 'valueOf', model: 'x' }] };
    expect(refusal(base({ model: fallback }))).toContain('"valueOf"');
    const profile = { id: 'p', provider: 'toString', type: 'api_key', secret: 'k' };
    expect(refusal(base({ authProfiles: [profile] }))).toContain('"toString"');
  });

  it('refuses a __proto__ key naming the option when it is in providers or queue.byChannel', () => {
    const provider = scriptedModel([{ text: 'ok' }], { clock: fakeClock() });
    const providers = JSON.parse('{"__proto__": {}}') as Record<string, unknown>;
    providers.scripted = provider;
    expect(refusal(base({ providers }))).toContain('providers');
    const byChannel = JSON.parse('{"__proto__": {"mode": "reject"}}') as unknown;
    expect(refusal(base({ queue: { byChannel } }))).toContain('queue.byChannel');
  });

  it('refuses tools: [{}] with invalid_input naming the option', () => {
    expect(refusal(base({ tools: [{}] }))).toContain('tools');
    expect(refusal(base({ tools: [{ name: 'x', description: 'd', input: {} }] }))).toContain('tools');
  });

  it.each([
    ['limits.runTimeoutMs', { limits: { runTimeoutMs: year + 1 } }],
    ['limits.pauseTimeoutMs', { limits: { pauseTimeoutMs: year + 1 } }],
    ['limits.interruptWaitMs', { limits: { interruptWaitMs: year + 1 } }],
    ['sessions.hibernateAfterMs', { sessions: { hibernateAfterMs: year + 1 } }],
    ['globalLane.warnAfterMs', { globalLane: { warnAfterMs: year + 1 } }],
    ['queue.debounceMs', { queue: { debounceMs: year + 1 } }],
    ['queue.maxWaitMs', { queue: { maxWaitMs: year + 1 } }],
    ['failover.maxWaitMs', { failover: { maxWaitMs: year + 1 } }],
  ])('refuses %s beyond a year', (path, overrides) => {
    expect(refusal(base(overrides))).toContain(path.split('.').at(-1));
  });

  it.each([
    ['a tool timeoutMs', () => defineTool({ ...tool, timeoutMs: year + 1 })],
    ['a tool retry.baseMs', () => defineTool({ ...tool, retry: { attempts: 1, baseMs: year + 1 } })],
    ['an OpenAI provider timeoutMs', () => openaiProvider({ apiKey: 'k', timeoutMs: year + 1 })],
    ['an Anthropic provider timeoutMs', () => anthropicProvider({ apiKey: 'k', timeoutMs: year + 1 })],
    [
      'globalLane.rate.intervalMs',
      () => createRuntime(base({ globalLane: { rate: { limit: 1, intervalMs: year + 1 } } })),
    ],
  ])('refuses %s beyond a year', async (_what, make: () => unknown) => {
    expect(isRuntimeError(await errorOf(Promise.resolve().then(make)), 'invalid_input')).toBe(true);
  });

  it('accepts durations of 30 days, above what one host timer takes', async () => {
    const days30 = 30 * 24 * 3_600_000;
    const runtime = createRuntime(base({ limits: { runTimeoutMs: days30, pauseTimeoutMs: days30 } }));
    await runtime.close();
  });
});

describe('Session arguments', () => {
  it.each([
    ['text', { text: 'half \ud83d pair' }],
    ['id', { id: 'm\udc00', text: 'hi' }],
    ['sender id', { text: 'hi', sender: { id: '\ud800' } }],
    ['thread', { text: 'hi', thread: 't\ud800' }],
  ])('refuses a lone surrogate in the message %s and stores nothing', async (_what, message) => {
    const ledger = createMemoryLedger();
    const h = createHarness([{ text: 'ok' }], { ledger });
    const error = await errorOf(h.runtime.session('telegram:1').send(message));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(await ledger.listMessages('telegram:1')).toEqual([]);
    await h.close();
  });

  it.each([
    ['approve message', { toolCallId: 'call-1', decision: 'reject', message: 'no \ud83d' }],
    ['approve toolCallId', { toolCallId: 'call-\udc00', decision: 'approve' }],
  ] as const)('refuses a lone surrogate in the %s with invalid_input', async (_what, input) => {
    const h = createHarness([{ text: 'ok' }]);
    const error = await errorOf(h.runtime.session('telegram:1').approve(input));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    await h.close();
  });

  it('refuses a lone surrogate in a supplied tool error with invalid_input', async () => {
    const h = createHarness([{ text: 'ok' }]);
    const supplied = h.runtime
      .session('telegram:1')
      .supplyToolResult({ toolCallId: 'call-1', error: 'bad \ud800' });
    expect(isRuntimeError(await errorOf(supplied), 'invalid_input')).toBe(true);
    await h.close();
  });

  it('accepts a well-formed surrogate pair in the text', async () => {
    const h = createHarness([{ text: 'ok' }]);
    const result = await h.runtime.session('telegram:1').send({ text: 'emoji 😀' });
    expect(result.disposition).toBe('started');
    await h.close();
  });

  it('refuses a session key with a lone surrogate', () => {
    const h = createHarness([{ text: 'ok' }]);
    let error: unknown;
    try {
      h.runtime.session('telegram:\ud800');
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    return h.close();
  });

  it('refuses configure(null) and writes no session row', async () => {
    const ledger = createMemoryLedger();
    const h = createHarness([{ text: 'ok' }], { ledger });
    const error = await errorOf(h.runtime.session('telegram:1').configure(null as never));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(await ledger.getSession('telegram:1')).toBeUndefined();
    await h.close();
  });

  it('refuses configure with a debounce beyond a year', async () => {
    const h = createHarness([{ text: 'ok' }]);
    const error = await errorOf(h.runtime.session('telegram:1').configure({ debounceMs: year + 1 }));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    await h.close();
  });

  it('refuses waitForEnd and close with a timeout beyond a year', async () => {
    const h = createHarness([{ text: 'ok' }]);
    const chat = h.runtime.session('telegram:1');
    expect(isRuntimeError(await errorOf(chat.waitForEnd({ timeoutMs: year + 1 })), 'invalid_input')).toBe(
      true,
    );
    expect(isRuntimeError(await errorOf(h.runtime.close({ timeoutMs: 2 ** 53 })), 'invalid_input')).toBe(
      true,
    );
    await h.close();
  });
});

describe('limits.pauseTimeoutMs on the system clock', () => {
  it('keeps a run paused past 2^31 ms when the pause timeout is a year and host timers are capped', async () => {
    const host = fakeClock();
    const clock = createSystemClock({ host, maxTimerMs: 2 ** 24 });
    const model = scriptedModel([{ toolCalls: [{ name: 'later', args: {} }] }, { text: 'done' }], { clock });
    const later = { name: 'later', description: 'deferred', input: z.object({}), risk: 'low' as const };
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      clock,
      tools: [later],
      limits: { pauseTimeoutMs: year },
    });
    const chat = runtime.session('telegram:1');
    await chat.send('go');
    await host.advance(0);
    expect(await chat.waitForEnd({ timeoutMs: 0 })).toMatchObject({ status: 'paused' });
    await host.advance(2 ** 31);
    expect(chat.status().state).toBe('awaiting_tool_results');
    const closing = runtime.close();
    await host.advance(0);
    await closing;
  });
});
