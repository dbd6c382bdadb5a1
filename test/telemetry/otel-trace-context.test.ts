import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import { traceRuntime, withTraceContext } from 'agentlanes/otel';
import { createHarness } from '../support/runtime-harness.js';
import { createSpanRecorder, parentOf } from './otel-support.js';

describe('withTraceContext', () => {
  it("makes the run that answers a message a child of the sender's span, and links the others it answers", async () => {
    const h = createHarness([{ text: 'one two three', tokenDelayMs: 10 }, { text: 'ok' }], {
      queue: { mode: 'collect', debounceMs: 0 },
    });
    const recorder = createSpanRecorder();
    const tracer = recorder.provider.getTracer('test');
    const stop = traceRuntime(h.runtime, { tracer });
    const chat = h.runtime.session('telegram:1');
    const webhooks = ['webhook 1', 'webhook 2', 'webhook 3'].map((name) => tracer.startSpan(name));
    const from = (index: number) => trace.setSpan(ROOT_CONTEXT, webhooks[index]!);
    await chat.send(withTraceContext({ id: 'a', text: 'first' }, from(0)));
    await chat.send(withTraceContext({ id: 'b', text: 'second' }, from(1)));
    await chat.send(withTraceContext({ id: 'c', text: 'third' }, from(2)));
    const second = recorder.ended('invoke_agent', 2);
    await h.clock.advance(20);
    await h.clock.runAll();
    const [first, collected] = [await recorder.ended('invoke_agent'), await second];
    const [one, two, three] = webhooks.map((span) => span.spanContext());
    expect([parentOf(first), first.spanContext().traceId]).toEqual([one?.spanId, one?.traceId]);
    expect([parentOf(collected), collected.spanContext().traceId]).toEqual([two?.spanId, two?.traceId]);
    expect(collected.links.map((link) => link.context.spanId)).toEqual([three?.spanId]);
    // The run's own children stay in the sender's trace.
    const chats = recorder.spans().filter((span) => span.name === 'chat m');
    expect(chats.map((span) => span.spanContext().traceId)).toEqual([one?.traceId, two?.traceId]);
    await h.close();
    await stop();
  });

  it('leaves the message as it is without an active span, and send refuses a malformed traceparent', async () => {
    expect(withTraceContext('hi')).toEqual({ text: 'hi' });
    expect(withTraceContext({ id: 'a', text: 'hi' })).toEqual({ id: 'a', text: 'hi' });
    const h = createHarness([{ text: 'ok' }]);
    let thrown: unknown;
    try {
      await h.runtime.session('telegram:1').send({ text: 'hi', traceparent: '00-not-a-trace' });
    } catch (error) {
      thrown = error;
    }
    expect(isRuntimeError(thrown, 'invalid_input')).toBe(true);
    expect(h.runtime.session('telegram:1').status()).toMatchObject({ state: 'idle', queued: 0 });
    await h.close();
  });
});
