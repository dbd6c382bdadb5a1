import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, createSqliteLedger, defineTool, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';

const tempDb = (): string => tempLedgerPath('approvals');

/** Tools that count how often they really ran, across both "processes". */
function tools(ran: string[]) {
  return [
    defineTool({
      name: 'refund',
      description: 'Refund an order',
      risk: 'high',
      input: z.object({ orderId: z.string() }),
      execute: ({ orderId }) => {
        ran.push(`refund:${orderId}`);
        return 'refunded';
      },
    }),
    defineTool({
      name: 'lookup',
      description: 'Look an order up',
      input: z.object({ orderId: z.string() }),
      execute: ({ orderId }) => {
        ran.push(`lookup:${orderId}`);
        return 'shipped';
      },
    }),
    defineTool({
      name: 'ask_user',
      description: 'Ask the user',
      input: z.object({ question: z.string() }),
    }),
  ];
}

const ids = sequentialIds();

function start(path: string, script: Script, ran: string[]) {
  const clock = fakeClock({ now: 0 });
  const ledger: Ledger = createSqliteLedger({ path });
  const model = scriptedModel(script, { clock });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    tools: tools(ran),
    clock,
    ids,
    onError: (error) => {
      throw error;
    },
  });
  return { runtime, ledger, model, clock };
}

describe('approvals across a restart (SQLite ledger)', () => {
  it('keeps the pause, resumes where it stopped and never runs a sibling twice', async () => {
    const path = tempDb();
    const ran: string[] = [];
    const batch = [
      { id: 'call-r', name: 'refund', args: { orderId: 'A1' } },
      { id: 'call-l', name: 'lookup', args: { orderId: 'A1' } },
    ];
    const first = start(path, [{ toolCalls: batch }], ran);
    const chat = first.runtime.session('telegram:1');
    await chat.send('refund A1');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused', waiting: [{ toolCallId: 'call-r' }] });
    expect(ran).toEqual(['lookup:A1']);
    await first.runtime.close();
    await first.ledger.close();

    const second = start(path, [{ text: 'All done.' }], ran);
    const again = second.runtime.session('telegram:1');
    await again.waitForEnd();
    expect(again.status()).toMatchObject({ state: 'awaiting_approval' });
    expect(await again.waitForEnd()).toMatchObject({
      status: 'paused',
      state: 'awaiting_approval',
      waiting: [{ toolCallId: 'call-r', tool: 'refund', needs: 'approval' }],
    });
    await again.approve({ toolCallId: 'call-r', decision: 'approve' });
    expect(await again.waitForEnd()).toMatchObject({ run: { status: 'completed', text: 'All done.' } });
    expect(ran).toEqual(['lookup:A1', 'refund:A1']);
    const messages = second.model.requests[0]?.messages ?? [];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(messages.slice(2).map((message) => message.content)).toEqual(['refunded', 'shipped']);

    const runs = await again.runs();
    expect(runs.map((run) => run.status)).toEqual(['completed']);
    const transcript = await again.transcript();
    expect(transcript.map((turn) => turn.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    await second.runtime.close();
    await second.ledger.close();
  });

  it('keeps a decision made before the restart and a deferred call still waiting', async () => {
    const path = tempDb();
    const ran: string[] = [];
    const batch = [
      { id: 'call-r', name: 'refund', args: { orderId: 'B2' } },
      { id: 'call-q', name: 'ask_user', args: { question: 'sure?' } },
    ];
    const first = start(path, [{ toolCalls: batch }], ran);
    const chat = first.runtime.session('telegram:1');
    await chat.send('refund B2');
    await chat.waitForEnd();
    await chat.approve({ toolCallId: 'call-r', decision: 'approve', remember: 'session' });
    expect(chat.status().state).toBe('awaiting_tool_results');
    await first.runtime.close();
    await first.ledger.close();

    const second = start(
      path,
      [
        { text: 'ok' },
        { toolCalls: [{ id: 'call-r9', name: 'refund', args: { orderId: 'C3' } }] },
        { text: 'again' },
      ],
      ran,
    );
    const again = second.runtime.session('telegram:1');
    expect(await again.waitForEnd()).toMatchObject({
      status: 'paused',
      state: 'awaiting_tool_results',
      waiting: [{ toolCallId: 'call-q' }],
    });
    await again.supplyToolResult({ toolCallId: 'call-q', output: 'yes' });
    expect(await again.waitForEnd()).toMatchObject({ run: { status: 'completed' } });
    expect(ran).toEqual(['refund:B2']);
    // remember: 'session' was recorded before the restart: the next refund runs without asking.
    await again.send('and C3');
    expect(await again.waitForEnd()).toMatchObject({ run: { status: 'completed', text: 'again' } });
    expect(ran).toEqual(['refund:B2', 'refund:C3']);
    await second.runtime.close();
    await second.ledger.close();
  });

  it('resumes a paused plan after a restart where it stopped, never running a completed step twice', async () => {
    const path = tempDb();
    const ran: string[] = [];
    const plan = {
      steps: [
        { id: 'look', tool: 'lookup', args: { orderId: 'P1' } },
        { id: 'pay', tool: 'refund', args: { orderId: 'P1' }, dependsOn: ['look'] },
        { id: 'check', tool: 'lookup', args: { orderId: 'P2' }, dependsOn: ['pay'] },
      ],
    };
    const first = start(path, [], ran);
    const paused = await first.runtime.session('telegram:9').executePlan(plan);
    expect(paused).toMatchObject({ status: 'awaiting_approval', awaiting: ['pay'] });
    expect(ran).toEqual(['lookup:P1']);
    await first.runtime.close();
    await first.ledger.close();

    const second = start(path, [], ran);
    const chat = second.runtime.session('telegram:9');
    expect((await chat.runs()).map((run) => run.status)).toEqual(['awaiting_approval']);
    const done = await chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] });
    expect(done.status).toBe('completed');
    expect(done.results.map((result) => [result.stepId, result.data])).toEqual([
      ['look', 'shipped'],
      ['pay', 'refunded'],
      ['check', 'shipped'],
    ]);
    expect(ran).toEqual(['lookup:P1', 'refund:P1', 'lookup:P2']);
    expect((await chat.runs()).map((run) => run.status)).toEqual(['completed']);
    await second.runtime.close();
    await second.ledger.close();
  });
});
