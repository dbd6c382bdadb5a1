import { describe, expect, it } from 'vitest';
import { createRuntime } from 'agentlanes';
import { traceRuntime } from 'agentlanes/otel';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { createSpanRecorder } from './otel-support.js';

/** A runtime on the SQLite file at `path`, answering every call. */
function open(path: string) {
  const clock = fakeClock({ now: 1_000_000 });
  const runtime = createRuntime({
    ledger: { path },
    providers: {
      scripted: scriptedModel((_request, callIndex) => ({ text: `reply ${callIndex}` }), { clock }),
    },
    model: { provider: 'scripted', model: 'm' },
    clock,
  });
  return { runtime, clock };
}

/** Close on the fake clock: its timers (drain, retention) run out while the runtime shuts down. */
async function close(opened: ReturnType<typeof open>): Promise<void> {
  const closing = opened.runtime.close();
  await opened.clock.runAll();
  await closing;
}

async function runOnce(opened: ReturnType<typeof open>, text: string): Promise<void> {
  const chat = opened.runtime.session('telegram:1');
  await chat.send({ text });
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await opened.clock.advance(0);
  expect(await ended).toMatchObject({ status: 'ended' });
}

describe('traceRuntime on a SQLite ledger', () => {
  it('traces what happens from now on, never the history a reopened ledger holds', async () => {
    const path = tempLedgerPath('otel');
    const before = open(path);
    await runOnce(before, 'first');
    await close(before);

    const after = open(path);
    const recorder = createSpanRecorder();
    const stop = traceRuntime(after.runtime, { tracer: recorder.provider.getTracer('test') });
    await runOnce(after, 'second');
    const run = await recorder.ended('invoke_agent');
    await close(after);
    await stop();
    const runs = recorder.spans().filter((span) => span.name.startsWith('invoke_agent'));
    expect(runs).toEqual([run]);
    expect(run.attributes['agentlanes.run.partial']).toBeUndefined();
    expect(recorder.spans().filter((span) => span.name === 'chat m')).toHaveLength(1);
  });
});
