import { describe, expect, it } from 'vitest';
import {
  fakeClock,
  scriptedModel,
  type FakeClock,
  type ScriptEntry,
  type ScriptedRequest,
} from 'agentlanes/testing';
import { isRuntimeError, RuntimeError } from '../../src/core/errors.js';
import {
  ProviderError,
  type ModelMessage,
  type ModelPart,
  type ModelRequest,
} from '../../src/providers/model-provider.js';

const request: ModelRequest = {
  model: 'test-model',
  system: 'sys',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
};

interface Timed {
  readonly part: ModelPart;
  readonly at: number;
}

/** Read a whole stream, noting the clock's time at each part; resolves with the parts or the error. */
async function collect(
  stream: AsyncIterable<ModelPart>,
  clock: FakeClock,
): Promise<{ parts: Timed[]; error?: unknown }> {
  const parts: Timed[] = [];
  try {
    for await (const part of stream) parts.push({ part, at: clock.now() });
    return { parts };
  } catch (error) {
    return { parts, error };
  }
}

function texts(parts: readonly Timed[]): string[] {
  return parts.flatMap(({ part }) => (part.type === 'text' ? [part.delta] : []));
}

describe('scriptedModel', () => {
  it('streams text word by word on the clock when tokenDelayMs is set', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ text: 'Hello there, world', tokenDelayMs: 10 }], { clock });
    const reading = collect(model.stream(request, { signal: new AbortController().signal }), clock);
    await clock.advance(15);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(100);
    const { parts, error } = await reading;
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { part: { type: 'text', delta: 'Hello' }, at: 0 },
      { part: { type: 'text', delta: ' there,' }, at: 10 },
      { part: { type: 'text', delta: ' world' }, at: 20 },
      { part: { type: 'usage', usage: { inputTokens: 2, outputTokens: 3 } }, at: 20 },
      { part: { type: 'finish', reason: 'stop' }, at: 20 },
    ]);
  });

  it('uses no timer at all when tokenDelayMs is zero', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ text: 'one two three' }], { clock });
    const { parts } = await collect(model.stream(request, { signal: new AbortController().signal }), clock);
    expect(texts(parts)).toEqual(['one', ' two', ' three']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps every character when the text has leading, inner and trailing whitespace', async () => {
    const clock = fakeClock();
    const text = '  leading\n\nand  trailing  ';
    const model = scriptedModel([{ text }], { clock });
    const { parts } = await collect(model.stream(request, { signal: new AbortController().signal }), clock);
    expect(texts(parts)).toEqual(['  leading', '\n\nand', '  trailing', '  ']);
    expect(texts(parts).join('')).toBe(text);
  });

  it('streams reasoning before the text and reports the given usage when usage is overridden', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ reasoning: 'think hard', text: 'ok', usage: { inputTokens: 99 } }], {
      clock,
    });
    const { parts } = await collect(model.stream(request, { signal: new AbortController().signal }), clock);
    expect(parts.map(({ part }) => part)).toEqual([
      { type: 'reasoning', delta: 'think' },
      { type: 'reasoning', delta: ' hard' },
      { type: 'text', delta: 'ok' },
      { type: 'usage', usage: { inputTokens: 99, outputTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('generates call-<callIndex>-<index> ids when tool calls have no id', async () => {
    const clock = fakeClock();
    const model = scriptedModel(
      [
        { text: 'first' },
        {
          text: 'Searching',
          toolCalls: [
            { name: 'search', args: { q: 'x' } },
            { id: 'mine', name: 'lookup', args: {} },
          ],
        },
      ],
      { clock },
    );
    const signal = new AbortController().signal;
    await collect(model.stream(request, { signal }), clock);
    const { parts } = await collect(model.stream(request, { signal }), clock);
    expect(parts.map(({ part }) => part)).toEqual([
      { type: 'text', delta: 'Searching' },
      { type: 'tool_call', call: { id: 'call-1-0', name: 'search', args: { q: 'x' } } },
      { type: 'tool_call', call: { id: 'mine', name: 'lookup', args: {} } },
      { type: 'usage', usage: { inputTokens: 2, outputTokens: 1 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('throws a ProviderError with status, code and retryAfterMs when the entry is an error', async () => {
    const clock = fakeClock();
    const model = scriptedModel(
      [{ error: { status: 429, code: 'rate_limit', message: 'rate limit exceeded', retryAfterMs: 500 } }],
      { clock },
    );
    const { parts, error } = await collect(
      model.stream(request, { signal: new AbortController().signal }),
      clock,
    );
    expect(parts).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit', retryAfterMs: 500 });
    expect((error as Error).message).toBe('rate limit exceeded');
  });

  it('streams afterText then throws when an error entry cuts the stream', async () => {
    const clock = fakeClock();
    const model = scriptedModel(
      [{ afterText: 'partial answer', tokenDelayMs: 5, error: { status: 503, message: 'overloaded' } }],
      { clock },
    );
    const reading = collect(model.stream(request, { signal: new AbortController().signal }), clock);
    await clock.advance(5);
    const { parts, error } = await reading;
    expect(parts).toEqual([
      { part: { type: 'text', delta: 'partial' }, at: 0 },
      { part: { type: 'text', delta: ' answer' }, at: 5 },
    ]);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(503);
  });

  it('yields nothing until aborted and then throws the signal reason when the entry hangs', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ hang: true }], { clock });
    const controller = new AbortController();
    let settled = false;
    const reading = collect(model.stream(request, { signal: controller.signal }), clock).finally(() => {
      settled = true;
    });
    await clock.advance(60_000);
    expect(settled).toBe(false);
    const reason = new RuntimeError('timeout', 'run timed out');
    controller.abort(reason);
    const { parts, error } = await reading;
    expect(parts).toEqual([]);
    expect(error).toBe(reason);
  });

  it('stops between tokens with the signal reason when the signal aborts mid-stream', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ text: 'a b c d', tokenDelayMs: 10 }], { clock });
    const controller = new AbortController();
    const reading = collect(model.stream(request, { signal: controller.signal }), clock);
    await clock.advance(15);
    controller.abort(new RuntimeError('cancelled', 'user sent /stop'));
    await clock.advance(100);
    const { parts, error } = await reading;
    expect(texts(parts)).toEqual(['a', ' b']);
    expect(isRuntimeError(error, 'cancelled')).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('records a snapshot of each request when it is called', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }], { clock });
    const messages: ModelMessage[] = [{ role: 'user', content: 'hi' }];
    const tool = { name: 'search', description: 'Search', inputSchema: { type: 'object' } };
    const signal = new AbortController().signal;
    await collect(model.stream({ model: 'a', messages, tools: [tool] }, { signal }), clock);
    messages.push({ role: 'assistant', content: 'one' });
    const credential = { profileId: 'oa-1', secret: 'sk-test' };
    await collect(
      model.stream({ model: 'b', system: 'be brief', messages, tools: [] }, { signal, credential }),
      clock,
    );
    expect(model.calls).toBe(2);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]).toMatchObject({ model: 'a', profileId: undefined, system: undefined });
    expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(model.requests[0]?.tools.map((spec) => spec.name)).toEqual(['search']);
    expect(model.requests[1]).toMatchObject({ model: 'b', profileId: 'oa-1', system: 'be brief' });
    expect(model.requests[1]?.messages).toHaveLength(2);
    expect(JSON.stringify(model.requests)).not.toContain('sk-test');
  });

  it('counts calls without keeping requests when record is false', async () => {
    const clock = fakeClock();
    const model = scriptedModel(() => ({ text: 'ok' }), { clock, record: false });
    await collect(model.stream(request, { signal: new AbortController().signal }), clock);
    expect(model.calls).toBe(1);
    expect(model.requests).toEqual([]);
  });

  it('throws an internal RuntimeError when the script runs out', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ text: 'only one' }], { clock });
    const signal = new AbortController().signal;
    await collect(model.stream(request, { signal }), clock);
    const { error } = await collect(model.stream(request, { signal }), clock);
    expect(isRuntimeError(error, 'internal')).toBe(true);
    expect((error as Error).message).toContain('no script entry for call 1');
  });

  it('asks the function for each entry with the request and call index when given a function', async () => {
    const clock = fakeClock();
    const seen: Array<[string, number]> = [];
    const model = scriptedModel(
      (received, callIndex): ScriptEntry => {
        seen.push([received.model, callIndex]);
        return { text: `answer ${callIndex}` };
      },
      { clock },
    );
    const signal = new AbortController().signal;
    await collect(model.stream({ ...request, model: 'x' }, { signal }), clock);
    const { parts } = await collect(model.stream({ ...request, model: 'y' }, { signal }), clock);
    expect(seen).toEqual([
      ['x', 0],
      ['y', 1],
    ]);
    expect(texts(parts).join('')).toBe('answer 1');
  });

  it('passes the function the same snapshot as requests, with profileId, when given a function', async () => {
    const clock = fakeClock();
    const seen: ScriptedRequest[] = [];
    const model = scriptedModel(
      (received, callIndex): ScriptEntry => {
        seen.push(received);
        return received.profileId === 'p1'
          ? { error: { status: 429, message: `rate limit on call ${callIndex}` } }
          : { text: `answer from ${received.profileId ?? 'no profile'}` };
      },
      { clock },
    );
    const signal = new AbortController().signal;
    const first = await collect(
      model.stream(request, { signal, credential: { profileId: 'p1', secret: 'sk-one-0000' } }),
      clock,
    );
    const second = await collect(
      model.stream(request, { signal, credential: { profileId: 'p2', secret: 'sk-two-0000' } }),
      clock,
    );
    expect(first.error).toMatchObject({ status: 429 });
    expect(texts(second.parts).join('')).toBe('answer from p2');
    expect(seen.map((snapshot) => snapshot.profileId)).toEqual(['p1', 'p2']);
    expect(seen[0]).toBe(model.requests[0]);
    expect(seen[1]).toMatchObject({ model: 'test-model', system: 'sys', messages: [{ content: 'hi' }] });
    expect(JSON.stringify(seen)).not.toContain('sk-');
  });

  it('still accepts a function typed with ModelRequest when given one', async () => {
    const clock = fakeClock();
    const typed = (received: ModelRequest, callIndex: number): ScriptEntry => ({
      text: `${received.model} ${callIndex}`,
    });
    const model = scriptedModel(typed, { clock, record: false });
    const { parts } = await collect(model.stream(request, { signal: new AbortController().signal }), clock);
    expect(texts(parts).join('')).toBe('test-model 0');
  });

  it('throws the abort reason before any token when the signal is already aborted', async () => {
    const clock = fakeClock();
    const model = scriptedModel([{ text: 'never sent' }], { clock });
    const controller = new AbortController();
    controller.abort(new RuntimeError('cancelled', 'gone'));
    const { parts, error } = await collect(model.stream(request, { signal: controller.signal }), clock);
    expect(parts).toEqual([]);
    expect((error as Error).message).toBe('gone');
  });

  it('throws invalid_input at construction when an entry has no known shape', () => {
    const bad = [{ txt: 'typo' }] as unknown as ScriptEntry[];
    expect(() => scriptedModel(bad)).toThrow(RuntimeError);
    const negative = [{ text: 'x', tokenDelayMs: -1 }];
    expect(() => scriptedModel(negative)).toThrow(/tokenDelayMs/);
  });
});
