import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from 'agentlanes';
import { traceRuntime, withTraceContext } from 'agentlanes/otel';
import { scriptedModel } from 'agentlanes/testing';
import { freshSchema, postgresUrl } from '../support/postgres.js';
import { createSpanRecorder, parentOf } from './otel-support.js';

type Runtime = ReturnType<typeof createRuntime>;
const running: Runtime[] = [];
afterEach(async () => {
  for (const runtime of running.splice(0)) await runtime.close();
});

/** A cluster worker in this process (its own connections and worker id) on `schema`. */
function worker(schema: string): Runtime {
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    cluster: { leaseMs: 2_000, pollMs: 100, scanMs: 250 },
    providers: { scripted: scriptedModel((_request, callIndex) => ({ text: `reply ${callIndex}` })) },
    model: { provider: 'scripted', model: 'm' },
  });
  running.push(runtime);
  return runtime;
}

describe('traceRuntime on a cluster', { timeout: 60_000 }, () => {
  it('traces each run once with a durable consumer, the forwarded one under the span that called', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    const recorder = createSpanRecorder();
    const stops = [
      traceRuntime(a, { tracer: recorder.provider.getTracer('worker-a'), consumer: 'otel' }),
      traceRuntime(b, { tracer: recorder.provider.getTracer('worker-b'), consumer: 'otel' }),
    ];
    // B takes the session; A's call is forwarded to B.
    await b.session('telegram:1').send({ id: 'm1', text: 'hello' });
    expect(await b.session('telegram:1').waitForEnd({ timeoutMs: 20_000 })).toMatchObject({
      status: 'ended',
    });
    // The caller's span on A: its trace context travels with the forwarded call to B's run.
    const webhook = recorder.provider.getTracer('app').startSpan('webhook');
    const from = trace.setSpan(ROOT_CONTEXT, webhook);
    await a.session('telegram:1').send(withTraceContext({ id: 'm2', text: 'again' }, from));
    expect(await a.session('telegram:1').waitForEnd({ timeoutMs: 20_000 })).toMatchObject({
      status: 'ended',
    });
    await recorder.ended('invoke_agent', 2);
    // Both tracing loops end: every span either worker made is in the recorder now, and no other comes.
    await Promise.all(stops.map((stop) => stop()));

    const runs = recorder.spans().filter((span) => span.name.startsWith('invoke_agent'));
    const runIds = runs.map((span) => span.attributes['agentlanes.run.id']);
    expect(runIds).toHaveLength(2);
    expect(new Set(runIds).size).toBe(2);
    const forwarded = runs.find((span) => parentOf(span) !== undefined);
    expect(parentOf(forwarded!)).toBe(webhook.spanContext().spanId);
    expect(forwarded?.spanContext().traceId).toBe(webhook.spanContext().traceId);
    expect(runs.filter((span) => parentOf(span) === undefined)).toHaveLength(1);
    const chats = recorder.spans().filter((span) => span.name === 'chat m');
    expect(chats.map((span) => parentOf(span)).sort()).toEqual(
      runs.map((span) => span.spanContext().spanId).sort(),
    );
    for (const chat of chats) {
      const run = runs.find((span) => span.spanContext().spanId === parentOf(chat));
      expect(chat.spanContext().traceId).toBe(run?.spanContext().traceId);
    }
  });
});
