import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError, type RuntimeOptions } from 'agentlanes';
import { traceRuntime } from 'agentlanes/otel';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { createHarness, type Harness } from '../support/runtime-harness.js';
import { createSpanRecorder, parentOf, type SpanRecorder } from './otel-support.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'looks a city up',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: 'sunny and warm' }),
});

const twoKeys: RuntimeOptions['authProfiles'] = [
  { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' },
  { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-two-0000' },
];

/** A tool call, then the answer: two model calls and a tool call in one run. */
const toolThenAnswer: Script = [
  {
    toolCalls: [{ id: 'call-1', name: 'lookup', args: { city: 'Lisbon' } }],
    usage: { inputTokens: 12, outputTokens: 4 },
  },
  { text: 'Lisbon is sunny today', usage: { inputTokens: 30, outputTokens: 5 } },
];

function traced(script: Script, options: Partial<RuntimeOptions> = {}, recordContent = false) {
  const h = createHarness(script, { tools: [lookup], ...options });
  const recorder = createSpanRecorder();
  const stop = traceRuntime(h.runtime, { tracer: recorder.provider.getTracer('test'), recordContent });
  return { h, recorder, stop };
}

/** Send one message, let the fake clock run the run, and wait for its run span to end. */
async function runOnce(h: Harness, recorder: SpanRecorder, text: string): Promise<ReadableSpan> {
  const chat = h.runtime.session('telegram:1');
  await chat.send({ text });
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  await ended;
  return recorder.ended('invoke_agent');
}

function named(recorder: SpanRecorder, prefix: string): ReadableSpan[] {
  return recorder.spans().filter((span) => span.name.startsWith(prefix));
}

describe('traceRuntime', () => {
  it('makes a run span with a chat span per model call and an execute_tool span per tool call', async () => {
    const { h, recorder, stop } = traced(toolThenAnswer);
    const run = await runOnce(h, recorder, 'weather in Lisbon?');
    expect(run.name).toBe('invoke_agent agentlanes');
    expect(parentOf(run)).toBeUndefined();
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'm',
      'gen_ai.conversation.id': 'telegram:1',
      'agentlanes.run.id': h.of('run.started')[0]?.runId,
      'agentlanes.run.status': 'completed',
      'gen_ai.usage.input_tokens': 42,
      'gen_ai.usage.output_tokens': 9,
    });
    const chats = named(recorder, 'chat ');
    expect(chats.map((span) => [span.name, parentOf(span), span.kind])).toEqual([
      ['chat m', run.spanContext().spanId, SpanKind.CLIENT],
      ['chat m', run.spanContext().spanId, SpanKind.CLIENT],
    ]);
    expect(chats.map((span) => span.attributes)).toMatchObject([
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.request.model': 'm',
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 4,
        'gen_ai.response.finish_reasons': ['tool_calls'],
      },
      {
        'gen_ai.usage.input_tokens': 30,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.response.finish_reasons': ['stop'],
      },
    ]);
    const tools = named(recorder, 'execute_tool ');
    expect(tools.map((span) => [span.name, parentOf(span), span.status.code])).toEqual([
      ['execute_tool lookup', run.spanContext().spanId, SpanStatusCode.UNSET],
    ]);
    expect(tools[0]?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call-1',
    });
    // Every span of the run is in the run's trace.
    expect(new Set(recorder.spans().map((span) => span.spanContext().traceId))).toEqual(
      new Set([run.spanContext().traceId]),
    );
    await h.close();
    await stop();
  });

  it('shows a rotation after a 429 as an event of the run span with its reason', async () => {
    const { h, recorder, stop } = traced(
      [{ error: { status: 429, message: 'rate limit exceeded' } }, { text: 'ok' }],
      { authProfiles: twoKeys },
    );
    const run = await runOnce(h, recorder, 'hi');
    const events = run.events.map((event) => [event.name, event.attributes]);
    expect(events).toEqual([
      [
        'agentlanes.profile.cooldown',
        { 'agentlanes.auth_profile.id': 'p1', 'agentlanes.failover.reason': 'rate_limit' },
      ],
      [
        'agentlanes.failover.rotated',
        {
          'agentlanes.failover.reason': 'rate_limit',
          'gen_ai.provider.name': 'scripted',
          'gen_ai.request.model': 'm',
          'agentlanes.failover.from_profile': 'p1',
          'agentlanes.failover.to_profile': 'p2',
        },
      ],
    ]);
    expect(named(recorder, 'chat ').map((span) => span.attributes['agentlanes.auth_profile.id'])).toEqual([
      'p2',
    ]);
    await h.close();
    await stop();
  });

  it('shows a fallback to the next model as an event with its reason, and a failed run as an error span', async () => {
    const clock = fakeClock({ now: 0 });
    const primary = scriptedModel([{ error: { status: 429, message: 'too many requests' } }], { clock });
    const backup = scriptedModel([{ error: { status: 400, message: 'bad request' } }], { clock });
    const h = createHarness([], {
      clock,
      providers: { scripted: primary, backup },
      model: { provider: 'scripted', model: 'm', fallbacks: [{ provider: 'backup', model: 'm2' }] },
      authProfiles: [{ id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' }],
    });
    const recorder = createSpanRecorder();
    const stop = traceRuntime(h.runtime, { tracer: recorder.provider.getTracer('test') });
    const run = await runOnce(h, recorder, 'hi');
    expect(run.events.map((event) => event.name)).toContain('agentlanes.failover.fallback');
    expect(run.events.find((event) => event.name === 'agentlanes.failover.fallback')?.attributes).toEqual({
      'agentlanes.failover.reason': 'rate_limit',
      'agentlanes.failover.from_provider': 'scripted',
      'agentlanes.failover.from_model': 'm',
      'agentlanes.failover.to_provider': 'backup',
      'agentlanes.failover.to_model': 'm2',
    });
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: 'invalid_input' });
    expect(run.attributes).toMatchObject({
      'agentlanes.run.status': 'failed',
      'error.type': 'invalid_input',
    });
    await h.close();
    await stop();
  });

  it('gives a message that waited behind another run a queue-wait span under its own run', async () => {
    const { h, recorder, stop } = traced([{ text: 'one two three', tokenDelayMs: 10 }, { text: 'ok' }], {
      queue: { mode: 'followup', debounceMs: 0 },
    });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'first', text: 'first' });
    expect(await chat.send({ id: 'second', text: 'second' })).toMatchObject({ disposition: 'queued' });
    const second = recorder.ended('invoke_agent', 2);
    await h.clock.advance(20);
    await h.clock.runAll();
    const run = await second;
    const waits = named(recorder, 'agentlanes.queue_wait');
    expect(waits.map((span) => [parentOf(span), span.attributes['agentlanes.message.id']])).toEqual([
      [run.spanContext().spanId, 'second'],
    ]);
    const wait = waits[0] as ReadableSpan;
    // From the message's acceptance (t = 0) to its run's start, after the first run streamed for 20 ms.
    expect(wait.attributes['agentlanes.message.disposition']).toBe('queued');
    expect(wait.attributes['agentlanes.queue.waited_ms']).toBeGreaterThanOrEqual(20);
    expect(wait.endTime).toEqual(run.startTime);
    await h.close();
    await stop();
  });

  it('shows a wait for a global-lane slot as a queue-wait span and a lane event on the run that waited', async () => {
    const { h, recorder, stop } = traced([{ text: 'one two three', tokenDelayMs: 10 }, { text: 'ok' }], {
      globalLane: { concurrency: 1, warnAfterMs: 5 },
    });
    await h.runtime.session('telegram:1').send({ id: 'a', text: 'first' });
    const other = h.runtime.session('telegram:2');
    expect(await other.send({ id: 'b', text: 'second' })).toMatchObject({ disposition: 'started' });
    const second = recorder.ended('invoke_agent', 2);
    await h.clock.advance(20);
    await h.clock.runAll();
    const run = await second;
    expect(run.attributes['gen_ai.conversation.id']).toBe('telegram:2');
    expect(run.events.map((event) => [event.name, event.attributes?.['agentlanes.lane']])).toEqual([
      ['agentlanes.lane.waited', 'global'],
    ]);
    const waits = named(recorder, 'agentlanes.queue_wait');
    expect(waits.map((span) => [parentOf(span), span.attributes['agentlanes.message.disposition']])).toEqual([
      [run.spanContext().spanId, 'started'],
    ]);
    await h.close();
    await stop();
  });

  it('marks a steer message taken into the running run on its span', async () => {
    const { h, recorder, stop } = traced(
      [{ text: 'one two three', tokenDelayMs: 10 }, { text: 'ok' }],
      {},
      true,
    );
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'first' });
    await h.clock.advance(10);
    expect(await chat.send({ id: 'b', text: 'use metric units' }, { mode: 'steer' })).toMatchObject({
      disposition: 'steered',
    });
    const ended = chat.waitForEnd();
    await h.clock.runAll();
    await ended;
    const run = await recorder.ended('invoke_agent');
    const admitted = run.events.filter((event) => event.name === 'agentlanes.message.admitted');
    expect(admitted.map((event) => event.attributes)).toEqual([
      {
        'agentlanes.message.ids': ['b'],
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'use metric units' }] },
        ]),
      },
    ]);
    expect(named(recorder, 'chat m')).toHaveLength(2);
    await h.close();
    await stop();
  });

  it('ends the run span at an approval pause and links the span that resumes the run to it', async () => {
    const refund = defineTool({
      name: 'refund',
      description: 'refunds an order',
      risk: 'high',
      input: z.object({ orderId: z.string() }),
      execute: () => ({ refunded: true }),
    });
    const { h, recorder, stop } = traced(
      [{ toolCalls: [{ id: 'call-r', name: 'refund', args: { orderId: 'A1' } }] }, { text: 'Refunded.' }],
      { tools: [refund] },
    );
    const chat = h.runtime.session('telegram:1');
    await chat.send('refund A1');
    expect(await chat.waitForEnd({ timeoutMs: 60_000 })).toMatchObject({ status: 'paused' });
    const paused = await recorder.ended('invoke_agent');
    expect(paused.attributes['agentlanes.run.paused']).toBe('awaiting_approval');
    expect(paused.events.map((event) => event.name)).toEqual(['agentlanes.approval.requested']);
    await chat.approve({ toolCallId: 'call-r', decision: 'approve' });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    const resumed = await recorder.ended('invoke_agent', 2);
    expect(resumed.links.map((link) => link.context.spanId)).toEqual([paused.spanContext().spanId]);
    expect(resumed.attributes).toMatchObject({
      'agentlanes.run.id': paused.attributes['agentlanes.run.id'],
      'agentlanes.run.resumed_from': 'awaiting_approval',
      'agentlanes.run.status': 'completed',
    });
    expect(named(recorder, 'execute_tool refund').map(parentOf)).toEqual([resumed.spanContext().spanId]);
    await h.close();
    await stop();
  });

  it('opens a partial run span for a run already under way when tracing starts', async () => {
    const h = createHarness([{ text: 'one two three', tokenDelayMs: 10 }]);
    const chat = h.runtime.session('telegram:1');
    await chat.send('hi');
    await h.clock.advance(10);
    const recorder = createSpanRecorder();
    const stop = traceRuntime(h.runtime, { tracer: recorder.provider.getTracer('test') });
    const ended = chat.waitForEnd();
    await h.clock.advance(20);
    await ended;
    const run = await recorder.ended('invoke_agent');
    expect(run.attributes).toMatchObject({
      'agentlanes.run.partial': true,
      'agentlanes.run.status': 'completed',
    });
    expect(named(recorder, 'chat m').map(parentOf)).toEqual([run.spanContext().spanId]);
    await h.close();
    await stop();
  });

  it('refuses bad options with invalid_input', () => {
    const h = createHarness([]);
    expect(() => traceRuntime(h.runtime, { tracer: {} as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
    let thrown: unknown;
    try {
      traceRuntime(h.runtime, { recordContent: 'yes' as never });
    } catch (error) {
      thrown = error;
    }
    expect(isRuntimeError(thrown, 'invalid_input')).toBe(true);
    return h.close();
  });
});
