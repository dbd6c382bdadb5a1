import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, type Ledger, type RuntimeOptions } from 'agentlanes';
import type { Script } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((onResolve) => (resolve = onResolve));
  return { promise, resolve };
}

/** A `slow` tool that finishes when the test says so, and a `fast` one that counts its calls. */
function tools() {
  const gate = deferred<string>();
  const fastCalls: string[] = [];
  const slow = defineTool({
    name: 'slow',
    description: 'Waits for the test',
    input: z.object({}),
    execute: () => gate.promise,
  });
  const fast = defineTool({
    name: 'fast',
    description: 'Answers at once',
    input: z.object({ n: z.number() }),
    execute: ({ n }) => {
      fastCalls.push(String(n));
      return `fast ${n}`;
    },
  });
  return { gate, fastCalls, list: [slow, fast] };
}

function setup(script: Script, options: Partial<RuntimeOptions> = {}) {
  const h = createHarness(script, options);
  return { h, chat: h.runtime.session('telegram:1') };
}

// Tokens at t=0, 10 and 20: the run streams until t=20.
const streaming = { text: 'one two three', tokenDelayMs: 10 };
const skipped = 'Skipped due to queued user message.';

describe('Session.steer', () => {
  it('admits a steer sent while the model streams into the next model request and starts no run', async () => {
    const { h, chat } = setup([streaming, { text: 'Adjusted' }]);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(5);
    expect(await chat.steer({ id: 's', text: 'use metric units' })).toEqual({
      messageId: 's',
      disposition: 'steered',
      runId: 'run_1',
    });
    expect(chat.status()).toEqual({ state: 'streaming', runId: 'run_1', queued: 0 });
    await h.clock.advance(10_000);
    expect(h.model.requests[1]?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'one two three' },
      { role: 'user', content: 'use metric units' },
    ]);
    expect(h.of('run.started').map((event) => event.runId)).toEqual(['run_1']);
    expect(h.of('message.admitted').map((event) => [event.runId, event.messageIds])).toEqual([
      ['run_1', ['s']],
    ]);
    await h.close();
  });

  it('admits every pending steer together in arrival order when several wait at one boundary', async () => {
    const { h, chat } = setup([streaming, { text: 'Adjusted' }]);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(5);
    await chat.steer({ id: 's1', text: 'first' });
    await h.clock.advance(7);
    await chat.steer({ id: 's2', text: 'second' });
    await chat.steer({ id: 's3', text: 'third' });
    await h.clock.advance(10_000);
    expect(h.model.requests).toHaveLength(2);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({
      role: 'user',
      content: 'first\n\nsecond\n\nthird',
    });
    expect(h.of('message.admitted').map((event) => event.messageIds)).toEqual([['s1', 's2', 's3']]);
    const transcript = await chat.transcript();
    expect(transcript.map((turn) => [turn.role, turn.content, turn.messageIds])).toEqual([
      ['user', 'hi', ['a']],
      ['assistant', 'one two three', undefined],
      ['user', 'first\n\nsecond\n\nthird', ['s1', 's2', 's3']],
      ['assistant', 'Adjusted', undefined],
    ]);
    await h.close();
  });

  it('makes one more model call when the steer arrives during the final answer', async () => {
    const { h, chat } = setup([streaming, { text: 'Adjusted answer' }]);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(15);
    await chat.steer({ id: 's', text: 'shorter please' });
    const ended = chat.waitForEnd();
    await h.clock.advance(5);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { runId: 'run_1', status: 'completed', text: 'one two three\n\nAdjusted answer' },
    });
    expect(h.model.calls).toBe(2);
    expect(h.of('assistant.final').map((event) => event.text)).toEqual(['Adjusted answer']);
    await h.close();
  });

  it('skips unstarted tools and lets the running one finish when a steer arrives while tools run', async () => {
    const { gate, fastCalls, list } = tools();
    const calls = [
      { id: 'c1', name: 'slow', args: {} },
      { id: 'c2', name: 'fast', args: { n: 2 } },
      { id: 'c3', name: 'fast', args: { n: 3 } },
    ];
    const { h, chat } = setup([{ toolCalls: calls }, { text: 'Stopped' }], {
      tools: list,
      limits: { parallelToolCalls: 1 },
    });
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    expect(chat.status()).toEqual({ state: 'running', runId: 'run_1', queued: 0 });
    expect(await chat.steer({ id: 's', text: 'stop that' })).toMatchObject({ disposition: 'steered' });
    await h.clock.advance(100);
    expect(h.model.calls).toBe(1);
    expect(h.of('tool.skipped')).toEqual([]);
    gate.resolve('slow done');
    await h.clock.advance(0);
    expect(fastCalls).toEqual([]);
    expect(h.of('tool.succeeded').map((event) => event.toolCallId)).toEqual(['c1']);
    expect(h.of('tool.skipped').map((event) => [event.toolCallId, event.tool, event.reason])).toEqual([
      ['c2', 'fast', 'steered'],
      ['c3', 'fast', 'steered'],
    ]);
    expect(h.model.requests[1]?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', toolCalls: calls },
      { role: 'tool', toolCallId: 'c1', tool: 'slow', content: 'slow done' },
      { role: 'tool', toolCallId: 'c2', tool: 'fast', content: skipped },
      { role: 'tool', toolCallId: 'c3', tool: 'fast', content: skipped },
      { role: 'user', content: 'stop that' },
    ]);
    expect(h.of('run.ended').map((event) => [event.status, event.text])).toEqual([['completed', 'Stopped']]);
    await h.close();
  });

  it('lets every launched tool finish when the calls run in parallel and a steer arrives', async () => {
    const { gate, fastCalls, list } = tools();
    const calls = [
      { id: 'c1', name: 'slow', args: {} },
      { id: 'c2', name: 'fast', args: { n: 2 } },
    ];
    const { h, chat } = setup([{ toolCalls: calls }, { text: 'Done' }], { tools: list });
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    await chat.steer({ id: 's', text: 'and then?' });
    gate.resolve('slow done');
    await h.clock.advance(0);
    expect(fastCalls).toEqual(['2']);
    expect(h.of('tool.skipped')).toEqual([]);
    expect(h.model.requests[1]?.messages.slice(2)).toEqual([
      { role: 'tool', toolCallId: 'c1', tool: 'slow', content: 'slow done' },
      { role: 'tool', toolCallId: 'c2', tool: 'fast', content: 'fast 2' },
      { role: 'user', content: 'and then?' },
    ]);
    await h.close();
  });

  it('skips every tool call of the turn when the steer arrived while that turn streamed', async () => {
    const { fastCalls, list } = tools();
    const turn = {
      text: 'Let me check',
      tokenDelayMs: 10,
      toolCalls: [{ id: 'c1', name: 'fast', args: { n: 1 } }],
    };
    const { h, chat } = setup([turn, { text: 'ok' }], { tools: list });
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(5);
    await chat.steer({ id: 's', text: 'never mind' });
    await h.clock.advance(100);
    expect(fastCalls).toEqual([]);
    expect(h.of('tool.skipped').map((event) => event.toolCallId)).toEqual(['c1']);
    expect(h.model.requests[1]?.messages.slice(-2)).toEqual([
      { role: 'tool', toolCallId: 'c1', tool: 'fast', content: skipped },
      { role: 'user', content: 'never mind' },
    ]);
    await h.close();
  });

  it('queues the steer as a followup when it arrives once the last model call finished', async () => {
    const memory = createMemoryLedger();
    let steering: ReturnType<typeof chat.steer> | undefined;
    let stateWhenSteered: string | undefined;
    // The final answer's events are written while the run settles, before it ends: steer from there. The run waits
    // for its last turns to be written before it ends (a ledger that ties a close to them, `closesWith`, would end it
    // at once, and the steer would start the next run instead).
    const ledger: Ledger = {
      ...memory,
      closesWith: () => false,
      appendEvents(events) {
        if (steering === undefined && events.some((event) => event.type === 'assistant.final')) {
          stateWhenSteered = chat.status().state;
          steering = chat.steer({ id: 's', text: 'too late' });
        }
        return memory.appendEvents(events);
      },
    };
    const { h, chat } = setup([{ text: 'Answer' }, { text: 'ok' }], { ledger });
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    expect(stateWhenSteered).toBe('running');
    expect(await steering).toEqual({ messageId: 's', disposition: 'queued', position: 1 });
    expect(h.model.calls).toBe(1);
    await h.clock.advance(1000);
    expect(h.of('run.started').map((event) => [event.runId, event.messageIds, event.at])).toEqual([
      ['run_1', ['a'], 0],
      ['run_2', ['s'], 1000],
    ]);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'too late' });
    expect(h.of('message.steered')).toEqual([]);
    await h.close();
  });

  it('queues the steer as a followup when the session is idle with a queue waiting', async () => {
    const { h, chat } = setup([streaming, { text: 'ok' }, { text: 'ok' }], { queue: { mode: 'followup' } });
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'queued' });
    await h.clock.advance(20);
    expect(chat.status()).toEqual({ state: 'idle', queued: 1 });
    expect(await chat.steer({ id: 's', text: 'steer?' })).toEqual({
      messageId: 's',
      disposition: 'queued',
      position: 2,
    });
    expect(await chat.send({ id: 'sb', text: 'backlog?' }, { mode: 'steer-backlog' })).toEqual({
      messageId: 'sb',
      disposition: 'queued',
      position: 3,
    });
    await h.clock.advance(2000);
    expect(h.of('run.started').map((event) => event.messageIds)).toEqual([['a'], ['b'], ['s'], ['sb']]);
    expect(h.of('message.steered')).toEqual([]);
    await h.close();
  });

  it('puts an unadmitted steer back at the front of the queue when the run is aborted first', async () => {
    const { h, chat } = setup([streaming, { text: 'ok' }, { text: 'ok' }], { queue: { mode: 'followup' } });
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'queued' });
    await h.clock.advance(5);
    await chat.steer({ id: 's', text: 'steer me' });
    expect(await chat.abort()).toBe(true);
    await h.clock.advance(2000);
    expect(h.of('run.started').map((event) => [event.runId, event.messageIds, event.at])).toEqual([
      ['run_1', ['a'], 0],
      // The drain keeps its timing (quiet 1000 ms after b); the steer goes first.
      ['run_2', ['s'], 1000],
      ['run_3', ['b'], 1000],
    ]);
    expect(h.of('run.ended').map((event) => event.status)).toEqual(['aborted', 'completed', 'completed']);
    await h.close();
  });
});

describe("Session.send with mode 'steer-backlog'", () => {
  it('steers the message into the run and also runs it as a followup when the run streams', async () => {
    const { h, chat } = setup([streaming, { text: 'steered' }, { text: 'followup' }]);
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(5);
    expect(await chat.send({ id: 'b', text: 'both' }, { mode: 'steer-backlog' })).toEqual({
      messageId: 'b',
      disposition: 'steered',
      runId: 'run_1',
      position: 1,
    });
    await h.clock.advance(2000);
    expect(h.model.requests.map((request) => request.messages.at(-1)?.content)).toEqual([
      'hi',
      'both',
      'both',
    ]);
    expect(h.of('run.started').map((event) => [event.runId, event.messageIds])).toEqual([
      ['run_1', ['a']],
      ['run_2', ['b']],
    ]);
    expect(h.of('message.steered').map((event) => [event.messageId, event.runId])).toEqual([['b', 'run_1']]);
    expect(h.of('message.queued').map((event) => [event.messageId, event.position])).toEqual([['b', 1]]);
    await h.close();
  });
});
