import { describe, expect, it } from 'vitest';
import { parseRuntimeEvent, type RuntimeEvent } from 'agentlanes';
import { traceRuntime } from 'agentlanes/otel';
import { createSpanRecorder, parentOf } from './otel-support.js';

/**
 * The events of a run whose worker died during a tool call and whose session another worker took over, as the
 * cluster's shared log holds them (each checked against the event schema): what the worker tracing the cluster
 * through its durable consumer reads.
 */
function takenOverRun(): RuntimeEvent[] {
  const envelope = { sessionKey: 'telegram:1', runId: 'run-1' };
  const payloads = [
    {
      type: 'message.received',
      at: 1_000,
      messageId: 'm1',
      text: 'hi',
      mode: 'collect',
      disposition: 'started',
    },
    { type: 'run.started', at: 1_000, messageIds: ['m1'], provider: 'openai', model: 'gpt-4o-mini' },
    { type: 'tool.called', at: 1_200, toolCallId: 'call-1', tool: 'lookup', args: { city: 'Lisbon' } },
    { type: 'run.resumed', at: 15_000, reason: 'takeover', attempt: 1 },
    { type: 'tool.in_doubt', at: 15_000, toolCallId: 'call-1', tool: 'lookup', args: {}, reason: 'takeover' },
    {
      type: 'cost.updated',
      at: 15_900,
      provider: 'openai',
      model: 'gpt-4o-mini',
      inputTokens: 40,
      outputTokens: 6,
      cost: 0,
      cumulativeCost: 0,
      priced: false,
      startedAt: 15_100,
      finishReason: 'stop',
    },
    {
      type: 'run.ended',
      at: 16_000,
      status: 'completed',
      text: 'sunny',
      usage: { inputTokens: 40, outputTokens: 6 },
      durationMs: 15_000,
    },
  ];
  return payloads.map((payload, index) =>
    parseRuntimeEvent({ ...envelope, ...payload, seq: index + 1, cursor: index + 1 }),
  );
}

describe('traceRuntime across a takeover', () => {
  it('keeps one run span whose resume on the new worker is an event, with the later model call under it', async () => {
    const events = takenOverRun();
    const recorder = createSpanRecorder();
    const source = {
      events: async function* () {
        for (const event of events) yield await Promise.resolve(event);
      },
    };
    const stop = traceRuntime(source, { tracer: recorder.provider.getTracer('test') });
    const run = await recorder.ended('invoke_agent');
    await stop();
    expect(recorder.spans().filter((span) => span.name.startsWith('invoke_agent'))).toEqual([run]);
    expect(run.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        'agentlanes.run.resumed',
        { 'agentlanes.run.resume_reason': 'takeover', 'agentlanes.run.resume_attempt': 1 },
      ],
      ['agentlanes.tool.in_doubt', { 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.id': 'call-1' }],
    ]);
    const chat = recorder.spans().find((span) => span.name === 'chat gpt-4o-mini');
    expect(parentOf(chat!)).toBe(run.spanContext().spanId);
    expect(chat?.startTime).toEqual([15, 100_000_000]);
    expect(chat?.endTime).toEqual([15, 900_000_000]);
    // The tool call the dead worker started has no outcome: its span ends when the new worker finds it in doubt.
    const tool = recorder.spans().find((span) => span.name === 'execute_tool lookup');
    expect(parentOf(tool!)).toBe(run.spanContext().spanId);
    expect(tool?.attributes['agentlanes.tool.in_doubt']).toBe(true);
    expect(tool?.endTime).toEqual([15, 0]);
  });
});
