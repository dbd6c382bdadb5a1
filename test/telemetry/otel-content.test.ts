import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RuntimeOptions } from 'agentlanes';
import { traceRuntime } from 'agentlanes/otel';
import type { Script } from 'agentlanes/testing';
import { createHarness, type Harness } from '../support/runtime-harness.js';
import { createSpanRecorder, exportedText, type SpanRecorder } from './otel-support.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'looks a city up',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: 'sunny and warm' }),
});

// The first key's rate-limit error echoes the key; the second key answers.
const profiles: RuntimeOptions['authProfiles'] = [
  { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-live-one-0000' },
  { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-live-two-0000' },
];
const script: Script = [
  { error: { status: 429, message: 'rate limit exceeded for key sk-live-one-0000' } },
  { toolCalls: [{ id: 'call-1', name: 'lookup', args: { city: 'Lisbon' } }] },
  { text: 'Lisbon is sunny today' },
];
const userText = 'my order 4242 ships to Lisbon, weather there?';

async function tracedRun(recordContent: boolean): Promise<{ h: Harness; recorder: SpanRecorder }> {
  const h = createHarness(script, { tools: [lookup], authProfiles: profiles });
  const recorder = createSpanRecorder();
  traceRuntime(h.runtime, { tracer: recorder.provider.getTracer('test'), recordContent });
  const chat = h.runtime.session('telegram:1');
  await chat.send({ text: userText });
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  expect(await ended).toMatchObject({ run: { status: 'completed' } });
  await recorder.ended('invoke_agent');
  return { h, recorder };
}

function only(recorder: SpanRecorder, prefix: string, index = 0): ReadableSpan {
  const span = recorder.spans().filter((candidate) => candidate.name.startsWith(prefix))[index];
  if (span === undefined) throw new Error(`no span ${prefix} #${index}`);
  return span;
}

describe('traceRuntime content', () => {
  it('keeps message text, model output and tool arguments and results out of spans by default', async () => {
    const { h, recorder } = await tracedRun(false);
    const text = exportedText(recorder.spans());
    expect(recorder.spans().length).toBeGreaterThanOrEqual(4);
    for (const content of ['4242', 'Lisbon', 'sunny', 'weather']) expect(text).not.toContain(content);
    expect(text).not.toContain('gen_ai.input.messages');
    await h.close();
  });

  it('records them in the GenAI attributes when recordContent is set', async () => {
    const { h, recorder } = await tracedRun(true);
    const run = only(recorder, 'invoke_agent');
    expect(JSON.parse(run.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: userText }] },
    ]);
    expect(JSON.parse(run.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Lisbon is sunny today' }] },
    ]);
    expect(JSON.parse(only(recorder, 'chat ', 1).attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'Lisbon is sunny today' }],
        finish_reason: 'stop',
      },
    ]);
    const tool = only(recorder, 'execute_tool lookup');
    expect(JSON.parse(tool.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ city: 'Lisbon' });
    expect(JSON.parse(tool.attributes['gen_ai.tool.call.result'] as string)).toEqual({
      city: 'Lisbon',
      forecast: 'sunny and warm',
    });
    await h.close();
  });

  it('never puts an auth-profile secret in a span, even one a provider error echoes, content recorded or not', async () => {
    for (const recordContent of [false, true]) {
      const { h, recorder } = await tracedRun(recordContent);
      expect(only(recorder, 'invoke_agent').events.map((event) => event.name)).toContain(
        'agentlanes.failover.rotated',
      );
      const text = exportedText(recorder.spans());
      expect(text).not.toContain('sk-live-one-0000');
      expect(text).not.toContain('sk-live-two-0000');
      await h.close();
    }
  });
});

describe('traceRuntime without an SDK', () => {
  it('runs the bot as before with the no-op tracer of @opentelemetry/api, and stops', async () => {
    const h = createHarness(script, { tools: [lookup], authProfiles: profiles });
    const stop = traceRuntime(h.runtime);
    expect(trace.getTracer('agentlanes').startSpan('probe').isRecording()).toBe(false);
    const chat = h.runtime.session('telegram:1');
    await chat.send({ text: userText });
    const ended = chat.waitForEnd({ timeoutMs: 600_000 });
    await h.clock.advance(0);
    expect(await ended).toMatchObject({ run: { status: 'completed', text: 'Lisbon is sunny today' } });
    await stop();
    await h.close();
  });
});
