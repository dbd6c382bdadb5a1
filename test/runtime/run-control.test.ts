import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RuntimeOptions, type WaitResult } from 'agentlanes';
import type { Script } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

function setup(script: Script, options: Partial<RuntimeOptions> = {}) {
  const h = createHarness(script, options);
  return { h, chat: h.runtime.session('telegram:1') };
}

/** Track whether a promise settled yet, without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T } = { settled: false };
  void promise.then((value) => {
    state.settled = true;
    state.value = value;
  });
  return state;
}

// Tokens at t=0, 10, 20 and 30.
const slowText = { text: 'one two three four', tokenDelayMs: 10 };

describe('Session.abort', () => {
  it('ends a run still waiting in the global lane at once, leaving the running one alone', async () => {
    const h = createHarness([{ text: 'one two three four', tokenDelayMs: 10 }, { text: 'never asked' }], {
      globalLane: { concurrency: 1 },
    });
    const first = h.runtime.session('telegram:1');
    const second = h.runtime.session('telegram:2');
    await first.send({ id: 'a', text: 'hi' });
    expect(await second.send({ id: 'b', text: 'hello' })).toMatchObject({
      disposition: 'started',
      runId: 'run_2',
    });
    await h.clock.advance(5);
    expect(second.status()).toEqual({ state: 'running', runId: 'run_2', queued: 0 });
    const ended = second.waitForEnd();
    expect(await second.abort({ reason: 'user sent /stop' })).toBe(true);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { runId: 'run_2', status: 'aborted', text: '' },
    });
    expect(h.clock.now()).toBe(5);
    expect(first.status().state).toBe('streaming');
    await h.clock.advance(30);
    expect(h.of('run.ended').map((event) => [event.runId, event.status, event.at])).toEqual([
      ['run_2', 'aborted', 5],
      ['run_1', 'completed', 30],
    ]);
    expect(h.model.requests).toHaveLength(1);
    await h.close();
  });

  it('ends the run as aborted with its partial text when called while tokens stream', async () => {
    const { h, chat } = setup([slowText]);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(15);
    const ended = chat.waitForEnd();
    expect(await chat.abort({ reason: 'user sent /stop' })).toBe(true);
    await h.clock.advance(0);
    expect(await ended).toEqual<WaitResult>({
      status: 'ended',
      run: {
        runId: 'run_1',
        status: 'aborted',
        text: 'one two',
        messageIds: ['a'],
        startedAt: 0,
        endedAt: 15,
        error: { code: 'cancelled', message: 'user sent /stop' },
      },
    });
    expect(h.of('run.ended').map((event) => [event.status, event.text])).toEqual([['aborted', 'one two']]);
    expect(chat.status()).toEqual({ state: 'idle', queued: 0 });
    await h.close();
  });

  it('ends a hanging model call as aborted with no text when called', async () => {
    const { h, chat } = setup([{ hang: true }]);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(60_000);
    expect(chat.status()).toEqual({ state: 'streaming', runId: 'run_1', queued: 0 });
    const ended = chat.waitForEnd();
    expect(await chat.abort()).toBe(true);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { status: 'aborted', text: '', endedAt: 60_000 },
    });
    await h.close();
  });

  it('resolves false and changes nothing when no run is active', async () => {
    const { h, chat } = setup([{ text: 'ok' }]);
    expect(await chat.abort()).toBe(false);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    expect(await chat.abort()).toBe(false);
    expect(h.of('run.ended').map((event) => event.status)).toEqual(['completed']);
    await h.close();
  });

  it('aborts the signal a running tool received when the run is aborted', async () => {
    let seen: AbortSignal | undefined;
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until aborted',
      input: z.object({}),
      execute: (_args, { signal }) => {
        seen = signal;
        return new Promise<string>(() => undefined);
      },
    });
    const { h, chat } = setup([{ toolCalls: [{ id: 'c1', name: 'wait', args: {} }] }], { tools: [wait] });
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    expect(seen?.aborted).toBe(false);
    const ended = chat.waitForEnd();
    expect(await chat.abort()).toBe(true);
    expect(seen?.aborted).toBe(true);
    expect(await ended).toMatchObject({ status: 'ended', run: { status: 'aborted' } });
    await h.close();
  });
});

describe('Session.waitForEnd', () => {
  it('resolves idle at once when nothing runs', async () => {
    const { h, chat } = setup([{ text: 'ok' }]);
    expect(await chat.waitForEnd()).toEqual({ status: 'idle' });
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    // The run that send() started ended before anyone waited: the first wait still reports it, then idle.
    expect(await chat.waitForEnd()).toMatchObject({
      status: 'ended',
      run: { runId: 'run_1', status: 'completed' },
    });
    expect(await chat.waitForEnd()).toEqual({ status: 'idle' });
    await h.close();
  });

  it('resolves timeout after timeoutMs when the run goes on', async () => {
    const { h, chat } = setup([{ hang: true }]);
    await chat.send({ id: 'a', text: 'hi' });
    const waiting = track(chat.waitForEnd({ timeoutMs: 500 }));
    await h.clock.advance(499);
    expect(waiting.settled).toBe(false);
    await h.clock.advance(1);
    expect(waiting).toEqual({ settled: true, value: { status: 'timeout' } });
    await h.close();
  });

  it('waits at least 100 ms when timeoutMs is smaller', async () => {
    const { h, chat } = setup([{ hang: true }]);
    await chat.send({ id: 'a', text: 'hi' });
    const waiting = track(chat.waitForEnd({ timeoutMs: 10 }));
    await h.clock.advance(99);
    expect(waiting.settled).toBe(false);
    await h.clock.advance(1);
    expect(waiting).toEqual({ settled: true, value: { status: 'timeout' } });
    await h.close();
  });

  it('resolves every waiter with the same summary when many wait on one run', async () => {
    const { h, chat } = setup([{ text: 'one two three four', tokenDelayMs: 50 }]);
    await chat.send({ id: 'a', text: 'hi' });
    // The run ends at t=150: the waiter with a 100 ms timeout gives up first.
    const waiters = [chat.waitForEnd(), chat.waitForEnd({ timeoutMs: 100 }), chat.waitForEnd()];
    await h.clock.advance(150);
    const results = await Promise.all(waiters);
    expect(
      results.map((result) => (result.status === 'ended' ? [result.run.runId, result.run.text] : result)),
    ).toEqual([['run_1', 'one two three four'], { status: 'timeout' }, ['run_1', 'one two three four']]);
    await h.close();
  });
});

describe("Session.send with mode 'interrupt'", () => {
  it('ends the old run as interrupted and runs the message next when it arrives with mode interrupt', async () => {
    const { h, chat } = setup([slowText, { text: 'ok' }, { text: 'ok' }], { queue: { mode: 'followup' } });
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'queued first' });
    await h.clock.advance(12);
    const ended = chat.waitForEnd();
    expect(await chat.send({ id: 'c', text: 'stop' }, { mode: 'interrupt' })).toEqual({
      messageId: 'c',
      disposition: 'interrupted',
      position: 1,
    });
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { runId: 'run_1', status: 'interrupted', text: 'one two', error: { code: 'cancelled' } },
    });
    await h.clock.advance(1000);
    expect(h.of('run.started').map((event) => [event.runId, event.messageIds, event.at])).toEqual([
      ['run_1', ['a'], 0],
      ['run_2', ['c'], 12],
      ['run_3', ['b'], 1012],
    ]);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'stop' });
    await h.close();
  });
});

describe('RuntimeOptions.limits', () => {
  it('ends the run as timeout when it exceeds runTimeoutMs', async () => {
    const { h, chat } = setup([{ hang: true }], { limits: { runTimeoutMs: 5000 } });
    await chat.send({ id: 'a', text: 'hi' });
    const ended = track(chat.waitForEnd({ timeoutMs: 60_000 }));
    await h.clock.advance(4999);
    expect(chat.status().state).toBe('streaming');
    await h.clock.advance(1);
    expect(ended.value).toMatchObject({
      status: 'ended',
      run: { status: 'timeout', endedAt: 5000, error: { code: 'timeout' } },
    });
    await h.close();
  });

  it('fails the run with turn_limit when the model keeps asking for tools beyond maxToolTurns', async () => {
    const ping = defineTool({
      name: 'ping',
      description: 'Pong',
      input: z.object({}),
      execute: () => 'pong',
    });
    const { h, chat } = setup(() => ({ toolCalls: [{ name: 'ping', args: {} }] }), {
      tools: [ping],
      limits: { maxToolTurns: 2 },
    });
    await chat.send({ id: 'a', text: 'hi' });
    const ended = chat.waitForEnd();
    await h.clock.advance(0);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { status: 'failed', error: { code: 'turn_limit' } },
    });
    expect(h.model.calls).toBe(3);
    expect(h.of('tool.succeeded')).toHaveLength(2);
    await h.close();
  });
});

describe('defineTool input validation', () => {
  const add = defineTool({
    name: 'add',
    description: 'Adds two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  });

  it('feeds an error result back and runs the corrected call when the model sends invalid arguments', async () => {
    const script = [
      { toolCalls: [{ id: 'c1', name: 'add', args: { a: 'one', b: 2 } }] },
      { toolCalls: [{ id: 'c2', name: 'add', args: { a: 1, b: 2 } }] },
      { text: 'It is 3' },
    ];
    const { h, chat } = setup(script, { tools: [add] });
    await chat.send({ id: 'a', text: 'add 1 and 2' });
    await h.clock.advance(0);
    const [, second, third] = h.model.requests;
    expect(second?.messages.at(-1)).toEqual({
      role: 'tool',
      toolCallId: 'c1',
      tool: 'add',
      content: 'Error: invalid arguments for "add": a: Invalid input: expected number, received string',
      isError: true,
    });
    expect(third?.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'c2', tool: 'add', content: '3' });
    expect(h.of('tool.failed').map((event) => [event.toolCallId, event.error.code])).toEqual([
      ['c1', 'args_invalid'],
    ]);
    expect(h.of('run.ended').map((event) => [event.status, event.text])).toEqual([['completed', 'It is 3']]);
    await h.close();
  });

  it('fails the run with tool_failed when invalid calls exceed the correction budget', async () => {
    const { h, chat } = setup(() => ({ toolCalls: [{ name: 'add', args: {} }] }), { tools: [add] });
    await chat.send({ id: 'a', text: 'add' });
    await h.clock.advance(0);
    expect(h.model.calls).toBe(4);
    expect(h.of('run.ended').map((event) => [event.status, event.error?.code])).toEqual([
      ['failed', 'tool_failed'],
    ]);
    await h.close();
  });
});

describe('Session.status', () => {
  it('reports streaming, running and idle with the run id and queue length when the run moves through them', async () => {
    let release!: (value: string) => void;
    const hold = defineTool({
      name: 'hold',
      description: 'Holds',
      input: z.object({}),
      execute: () => new Promise<string>((resolve) => (release = resolve)),
    });
    const script = [
      { text: 'thinking it over', tokenDelayMs: 10, toolCalls: [{ name: 'hold', args: {} }] },
      { text: 'done' },
    ];
    const { h, chat } = setup(script, { tools: [hold] });
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'meanwhile' });
    await h.clock.advance(5);
    expect(chat.status()).toEqual({ state: 'streaming', runId: 'run_1', queued: 1 });
    await h.clock.advance(30);
    expect(chat.status()).toEqual({ state: 'running', runId: 'run_1', queued: 1 });
    release('held');
    await h.clock.advance(0);
    expect(chat.status()).toEqual({ state: 'idle', queued: 1 });
    await h.close();
  });
});

describe('Runtime.events', () => {
  it('emits blocks of 800 to 1200 characters and one final text when the answer is long', async () => {
    const sentence = 'The quick brown fox jumps over the lazy dog again and again. ';
    const paragraph = sentence.repeat(6).trim();
    const text = Array.from({ length: 8 }, () => paragraph).join('\n\n');
    const { h, chat } = setup([{ text }]);
    await chat.send({ id: 'a', text: 'tell me a story' });
    await h.clock.advance(0);
    const blocks = h.of('assistant.block');
    expect(text.length).toBeGreaterThan(2400);
    expect(blocks.map((block) => block.index)).toEqual(blocks.map((_, index) => index));
    for (const block of blocks.slice(0, -1)) {
      expect(block.text.length).toBeGreaterThanOrEqual(800);
      expect(block.text.length).toBeLessThanOrEqual(1200);
    }
    expect(blocks.map((block) => block.text).join('\n\n')).toBe(text);
    expect(h.of('assistant.final').map((event) => event.text)).toEqual([text]);
    expect(
      h
        .of('assistant.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(text);
    await h.close();
  });
});
