import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, createSqliteLedger, defineTool, isRuntimeError, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { errorOf } from '../support/error-of.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const tempDb = (): string => tempLedgerPath('paused');

const refund = defineTool({
  name: 'refund',
  description: 'Refund an order',
  risk: 'high',
  input: z.object({ orderId: z.string() }),
  execute: () => 'refunded',
});

function start(path: string, script: Script) {
  const clock = fakeClock({ now: 0 });
  const ledger: Ledger = createSqliteLedger({ path });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    tools: [refund],
    clock,
    ids: sequentialIds(),
  });
  return { runtime, ledger, clock };
}

const refundCall = { toolCalls: [{ id: 'call-r', name: 'refund', args: { orderId: 'A1' } }] };
const plan = { steps: [{ id: 's1', tool: 'refund', args: { orderId: 'P1' } }] };

describe('session.executePlan while a run is paused', () => {
  it('refuses the plan with rejected_busy and records no run when a run awaits approval', async () => {
    const first = start(tempDb(), [refundCall]);
    const chat = first.runtime.session('telegram:1');
    await chat.send('refund A1');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused' });
    const error = await errorOf(chat.executePlan(plan, { mode: 'auto' }));
    expect(isRuntimeError(error, 'rejected_busy')).toBe(true);
    expect((await chat.runs()).map((run) => run.status)).toEqual(['awaiting_approval']);
    await first.runtime.close();
    await first.ledger.close();
  });
});

describe('a session with a paused run and a paused plan across a restart', () => {
  it('restores the paused run so approve works and a new message queues behind it', async () => {
    const path = tempDb();
    const first = start(path, [refundCall]);
    const chat = first.runtime.session('telegram:1');
    await chat.send('refund A1');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused' });
    // A ledger written before plans were refused here: a plan paused after the run, in the same session.
    await first.ledger.putPlan({
      runId: 'plan-1',
      sessionKey: 'telegram:1',
      plan,
      options: { mode: 'approval', maxParallel: 5, failFast: false },
      approvedSteps: [],
      createdAt: 1,
    });
    await first.ledger.openRun({
      runId: 'plan-1',
      sessionKey: 'telegram:1',
      messageIds: [],
      provider: 'plan',
      model: 'approval',
      startedAt: 1,
      status: 'running',
      usage: { inputTokens: 0, outputTokens: 0 },
      text: '',
    } as never);
    await first.ledger.setRunStatus('plan-1', 'awaiting_approval');
    await first.runtime.close();
    await first.ledger.close();

    const second = start(path, [{ text: 'All done.' }, { text: 'next' }]);
    const again = second.runtime.session('telegram:1');
    expect(await again.waitForEnd()).toMatchObject({
      status: 'paused',
      state: 'awaiting_approval',
      waiting: [{ toolCallId: 'call-r' }],
    });
    expect(await again.send({ id: 'q2', text: 'another question' })).toMatchObject({
      disposition: 'collected',
      position: 1,
    });
    expect(again.status()).toMatchObject({ state: 'awaiting_approval', queued: 1 });
    await again.approve({ toolCallId: 'call-r', decision: 'approve' });
    expect(await again.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    const closing = second.runtime.close();
    await second.clock.runAll();
    await closing;
    await second.ledger.close();
  });
});
