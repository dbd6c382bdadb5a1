import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type RuntimeEvent, type RuntimeOptions } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { ledgerKinds } from '../support/temp-ledger.js';

const refund = defineTool({
  name: 'refund',
  description: 'Refund an order',
  risk: 'high',
  input: z.object({ orderId: z.string() }),
  execute: () => ({ refunded: true }),
});
const askUser = defineTool({
  name: 'ask_user',
  description: 'Ask the user',
  input: z.object({ question: z.string() }),
});

const ledgers = ledgerKinds;

function start(ledger: keyof typeof ledgers, script: Script, options: Partial<RuntimeOptions> = {}) {
  const clock = fakeClock({ now: 0 });
  const runtime = createRuntime({
    ledger: ledgers[ledger](),
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    tools: [refund, askUser],
    clock,
    ids: sequentialIds(),
    random: () => 0.5,
    ...options,
  });
  return { runtime, clock, chat: runtime.session('telegram:1') };
}

/**
 * Run `act` synchronously in the consumer's loop body for the first event of `type` (before the next event is
 * pulled), while `drive` makes things happen. Resolves what `act` returned.
 */
async function actOn<T>(
  runtime: ReturnType<typeof createRuntime>,
  type: RuntimeEvent['type'],
  act: (event: RuntimeEvent) => Promise<T> | T,
  drive: () => Promise<unknown>,
): Promise<T> {
  const controller = new AbortController();
  const consumer = (async () => {
    for await (const event of runtime.events({ signal: controller.signal })) {
      if (event.type === type) return await act(event);
    }
    throw new Error(`no ${type} event`);
  })();
  await drive();
  const result = await consumer;
  controller.abort();
  return result;
}

describe.each(['memory', 'sqlite'] as const)('an event on the %s ledger', (ledger) => {
  it('lets approve() succeed when called in the approval.requested handler', async () => {
    const { runtime, chat } = start(ledger, [
      { toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'A1' } }] },
      { text: 'done' },
    ]);
    await actOn(
      runtime,
      'approval.requested',
      () => chat.approve({ toolCallId: 'call-1', decision: 'approve' }),
      () => chat.send('refund A1'),
    );
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    await runtime.close();
  });

  it('lets approve() succeed when called in the run.paused handler', async () => {
    const { runtime, chat } = start(ledger, [
      { toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'A1' } }] },
      { text: 'done' },
    ]);
    await actOn(
      runtime,
      'run.paused',
      () => chat.approve({ toolCallId: 'call-1', decision: 'approve' }),
      () => chat.send('refund A1'),
    );
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    await runtime.close();
  });

  it('lets supplyToolResult() succeed when called in the tool.deferred handler', async () => {
    const { runtime, chat } = start(ledger, [
      { toolCalls: [{ id: 'call-1', name: 'ask_user', args: { question: 'size?' } }] },
      { text: 'done' },
    ]);
    await actOn(
      runtime,
      'tool.deferred',
      () => chat.supplyToolResult({ toolCallId: 'call-1', output: 'large' }),
      () => chat.send('order a shirt'),
    );
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    await runtime.close();
  });

  it('shows a queued message in queue.list() when message.queued is handled', async () => {
    const { runtime, chat, clock } = start(ledger, [
      { text: 'one two three', tokenDelayMs: 10 },
      { text: 'ok' },
    ]);
    const listed = await actOn(
      runtime,
      'message.queued',
      (event) => ({ event, list: chat.queue.list() }),
      async () => {
        await chat.send({ id: 'm1', text: 'first' });
        await chat.send({ id: 'm2', text: 'second' }, { mode: 'followup', debounceMs: 0 });
      },
    );
    expect(listed.event).toMatchObject({ messageId: 'm2' });
    expect(listed.list.map((item) => item.messageId)).toEqual(['m2']);
    await clock.runAll();
    await runtime.close();
  });

  it('names the run in status() when run.started is handled', async () => {
    const { runtime, chat, clock } = start(ledger, [{ text: 'one two three', tokenDelayMs: 10 }]);
    const seen = await actOn(
      runtime,
      'run.started',
      (event) => ({ runId: event.runId, status: chat.status() }),
      () => chat.send('hello'),
    );
    expect(seen.status.runId).toBe(seen.runId);
    expect(seen.status.state).not.toBe('idle');
    await clock.runAll();
    await runtime.close();
  });

  it('answers ended or idle from waitForEnd() when run.ended is handled', async () => {
    const { runtime, chat, clock } = start(ledger, [{ text: 'hi' }]);
    const seen = await actOn(
      runtime,
      'run.ended',
      (event) => ({ runId: event.runId, status: chat.status(), waited: chat.waitForEnd({ timeoutMs: 1 }) }),
      () => chat.send('hello'),
    );
    expect(seen.status.runId).not.toBe(seen.runId);
    expect(seen.status.state).toBe('idle');
    void clock.advance(1);
    expect(['ended', 'idle']).toContain((await seen.waited).status);
    await runtime.close();
  });
});
