import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError, type RuntimeOptions } from 'agentlanes';
import type { Script } from 'agentlanes/testing';
import { errorOf } from '../support/error-of.js';
import { createHarness } from '../support/runtime-harness.js';

/** A high-risk refund tool that records the arguments of every call that ran. */
function refundTool(ran: unknown[]) {
  return defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk: 'high',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    execute: (args) => {
      ran.push(args);
      return { refunded: args.amount };
    },
  });
}

function lookupTool(ran: unknown[]) {
  return defineTool({
    name: 'lookup',
    description: 'Look an order up',
    input: z.object({ orderId: z.string() }),
    execute: (args) => {
      ran.push(args);
      return { status: 'shipped' };
    },
  });
}

const refundCall = { id: 'call-r', name: 'refund', args: { orderId: 'A1', amount: 30 } };

async function pausedHarness(script: Script, ran: unknown[], options: Partial<RuntimeOptions> = {}) {
  const h = createHarness(script, { tools: [refundTool(ran), lookupTool(ran)], ...options });
  const chat = h.runtime.session('telegram:1');
  await chat.send('refund order A1');
  const waited = await chat.waitForEnd({ timeoutMs: 60_000 });
  await h.settled();
  return { h, chat, waited };
}

describe('session.approve', () => {
  it('pauses a high-risk call until approved, then runs it once and continues the run', async () => {
    const ran: unknown[] = [];
    const { h, chat, waited } = await pausedHarness(
      [{ toolCalls: [refundCall] }, { text: 'Refunded 30.' }],
      ran,
    );
    const runId = h.of('run.started')[0]?.runId;
    expect(waited).toEqual({
      status: 'paused',
      runId,
      state: 'awaiting_approval',
      waiting: [{ toolCallId: 'call-r', approvalId: 'call-r', tool: 'refund', needs: 'approval' }],
    });
    expect(chat.status()).toMatchObject({ state: 'awaiting_approval', runId });
    expect(ran).toEqual([]);
    expect(h.of('approval.requested')).toMatchObject([
      { toolCallId: 'call-r', approvalId: 'call-r', tool: 'refund', args: { orderId: 'A1', amount: 30 } },
    ]);
    expect(h.of('run.paused')).toMatchObject([{ state: 'awaiting_approval', toolCallIds: ['call-r'] }]);
    expect(h.model.requests).toHaveLength(1);

    await chat.approve({ toolCallId: 'call-r', decision: 'approve' });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    // The harness's stream reads what the ledger made durable (a step behind on Postgres): let it catch up.
    await h.settled();
    expect(ran).toEqual([{ orderId: 'A1', amount: 30 }]);
    expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 'call-r',
      content: '{"refunded":30}',
    });
    expect(h.of('approval.resolved')).toMatchObject([{ toolCallId: 'call-r', decision: 'approve' }]);
    expect(h.of('run.resumed')).toMatchObject([{ runId, from: 'awaiting_approval' }]);
    expect(h.of('run.ended')).toMatchObject([{ runId, status: 'completed', text: 'Refunded 30.' }]);
    await h.close();
  });

  it('feeds a rejection with its message back to the model and never runs the call', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall] }, { text: 'Understood.' }], ran);
    await chat.approve({ toolCallId: 'call-r', decision: 'reject', message: 'over the limit' });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(ran).toEqual([]);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      toolCallId: 'call-r',
      tool: 'refund',
      content: 'The operator rejected this call: over the limit',
      isError: true,
    });
    await h.close();
  });

  it('runs an edited call with the new arguments, and refuses edited arguments the schema rejects', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall] }, { text: 'Done.' }], ran);
    const bad = await errorOf(
      chat.approve({ toolCallId: 'call-r', decision: 'edit', args: { orderId: 'A1', amount: 'lots' } }),
    );
    expect(isRuntimeError(bad, 'args_invalid')).toBe(true);
    expect(chat.status().state).toBe('awaiting_approval');
    expect(h.of('approval.resolved')).toEqual([]);

    await chat.approve({ toolCallId: 'call-r', decision: 'edit', args: { orderId: 'A1', amount: 10 } });
    await chat.waitForEnd();
    expect(ran).toEqual([{ orderId: 'A1', amount: 10 }]);
    expect(h.of('tool.called')).toMatchObject([{ tool: 'refund', args: { orderId: 'A1', amount: 10 } }]);
    await h.close();
  });

  it("skips later approvals of the tool in the run with remember: 'run', but not in the next run", async () => {
    const ran: unknown[] = [];
    const second = { ...refundCall, id: 'call-r2', args: { orderId: 'B2', amount: 5 } };
    const third = { ...refundCall, id: 'call-r3', args: { orderId: 'C3', amount: 1 } };
    const { h, chat } = await pausedHarness(
      [{ toolCalls: [refundCall] }, { toolCalls: [second] }, { text: 'both done' }, { toolCalls: [third] }],
      ran,
    );
    await chat.approve({ toolCallId: 'call-r', decision: 'approve', remember: 'run' });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(ran).toHaveLength(2);
    expect(h.of('approval.requested')).toHaveLength(1);

    await chat.send('and C3');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused', waiting: [{ toolCallId: 'call-r3' }] });
    await h.close();
  });

  it("skips approvals of the tool for the rest of the session with remember: 'session', not in other sessions", async () => {
    const ran: unknown[] = [];
    const later = { ...refundCall, id: 'call-r2' };
    const { h, chat } = await pausedHarness(
      [
        { toolCalls: [refundCall] },
        { text: 'one' },
        { toolCalls: [later] },
        { text: 'two' },
        { toolCalls: [later] },
      ],
      ran,
    );
    await chat.approve({ toolCallId: 'call-r', decision: 'approve', remember: 'session' });
    await chat.waitForEnd();
    await chat.send('again');
    expect(await chat.waitForEnd()).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'two' },
    });
    expect(ran).toHaveLength(2);

    const other = h.runtime.session('telegram:2');
    await other.send('refund');
    expect(await other.waitForEnd()).toMatchObject({ status: 'paused' });
    await h.close();
  });

  it('pauses for tools listed in approvals.alwaysApprove whatever their risk', async () => {
    const ran: unknown[] = [];
    const { h, waited } = await pausedHarness(
      [{ toolCalls: [{ id: 'call-l', name: 'lookup', args: { orderId: 'A1' } }] }, { text: 'ok' }],
      ran,
      { approvals: { alwaysApprove: ['look*'] } },
    );
    expect(waited).toMatchObject({ status: 'paused', waiting: [{ tool: 'lookup' }] });
    expect(ran).toEqual([]);
    await h.close();
  });

  it('resolves parallel calls independently: a sibling that ran is never run again, results in call order', async () => {
    const ran: unknown[] = [];
    const lookup = { id: 'call-l', name: 'lookup', args: { orderId: 'A1' } };
    const refund2 = { ...refundCall, id: 'call-r2', args: { orderId: 'A2', amount: 7 } };
    const { h, chat, waited } = await pausedHarness(
      [{ toolCalls: [refundCall, lookup, refund2] }, { text: 'done' }],
      ran,
    );
    expect(waited).toMatchObject({ waiting: [{ toolCallId: 'call-r' }, { toolCallId: 'call-r2' }] });
    expect(ran).toEqual([{ orderId: 'A1' }]);
    expect(h.of('approval.requested').map((event) => event.toolCallId)).toEqual(['call-r', 'call-r2']);

    await chat.approve({ toolCallId: 'call-r2', decision: 'approve' });
    expect(chat.status().state).toBe('awaiting_approval');
    await chat.approve({ toolCallId: 'call-r', decision: 'reject' });
    await chat.waitForEnd();
    expect(ran).toEqual([{ orderId: 'A1' }, { orderId: 'A2', amount: 7 }]);
    const results = (h.model.requests[1]?.messages ?? []).filter((message) => message.role === 'tool');
    expect(results.map((message) => [message.toolCallId, message.content])).toEqual([
      ['call-r', 'The operator rejected this call.'],
      ['call-l', '{"status":"shipped"}'],
      ['call-r2', '{"refunded":7}'],
    ]);
    await h.close();
  });

  it('refuses unknown ids, other sessions, settled calls and bad input with a clear error, changing nothing', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall] }, { text: 'ok' }], ran);
    const other = h.runtime.session('telegram:2');
    expect(
      isRuntimeError(await errorOf(chat.approve({ toolCallId: 'nope', decision: 'approve' })), 'not_found'),
    ).toBe(true);
    expect(
      isRuntimeError(
        await errorOf(other.approve({ toolCallId: 'call-r', decision: 'approve' })),
        'not_found',
      ),
    ).toBe(true);
    for (const input of [
      { toolCallId: 'call-r', decision: 'maybe' },
      { toolCallId: 'call-r', decision: 'approve', args: { orderId: 'A1', amount: 1 } },
      { toolCallId: 'call-r', decision: 'edit' },
      { toolCallId: '', decision: 'approve' },
      { toolCallId: 'call-r', decision: 'approve', remember: 'forever' },
      null,
    ]) {
      const error = await errorOf(chat.approve(input as never));
      expect(isRuntimeError(error, 'invalid_input'), JSON.stringify(input)).toBe(true);
    }
    const wrongKind = await errorOf(chat.supplyToolResult({ toolCallId: 'call-r', output: 1 }));
    expect(isRuntimeError(wrongKind, 'invalid_input')).toBe(true);
    expect(h.of('approval.resolved')).toEqual([]);
    expect(chat.status().state).toBe('awaiting_approval');

    await chat.approve({ toolCallId: 'call-r', decision: 'approve' });
    await chat.waitForEnd();
    const settled = await errorOf(chat.approve({ toolCallId: 'call-r', decision: 'reject' }));
    expect(isRuntimeError(settled, 'not_found')).toBe(true);
    expect(ran).toHaveLength(1);
    await h.close();
  });

  it('refuses a second decision on a call while the run is still paused with invalid_input', async () => {
    const ran: unknown[] = [];
    const refund2 = { ...refundCall, id: 'call-r2' };
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall, refund2] }, { text: 'ok' }], ran);
    await chat.approve({ toolCallId: 'call-r', decision: 'approve' });
    const again = await errorOf(chat.approve({ toolCallId: 'call-r', decision: 'reject' }));
    expect(isRuntimeError(again, 'invalid_input')).toBe(true);
    expect(h.of('approval.resolved')).toHaveLength(1);
    await h.close();
  });
});

describe('a paused run', () => {
  it('queues messages that arrive meanwhile (a steer falls back to followup) and runs them after it', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness(
      [{ toolCalls: [refundCall] }, { text: 'refunded' }, { text: 'you are welcome' }, { text: 'here' }],
      ran,
    );
    expect(await chat.send('thanks', { mode: 'steer' })).toMatchObject({
      disposition: 'queued',
      position: 1,
    });
    expect(await chat.send('hello?', { mode: 'followup' })).toMatchObject({
      disposition: 'queued',
      position: 2,
    });
    await chat.approve({ toolCallId: 'call-r', decision: 'approve' });
    expect(await chat.waitForEnd()).toMatchObject({ run: { status: 'completed', text: 'refunded' } });
    await h.clock.advance(5_000);
    await chat.waitForEnd();
    await h.clock.advance(5_000);
    expect(h.of('run.ended').map((event) => event.text)).toEqual(['refunded', 'you are welcome', 'here']);
    expect(h.of('message.admitted')).toEqual([]);
    await h.close();
  });

  it('ends as aborted when aborted, cancelling what it waited for', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall] }], ran);
    expect(await chat.abort({ reason: 'user sent /stop' })).toBe(true);
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'aborted' } });
    expect(h.of('run.ended')).toMatchObject([
      { status: 'aborted', error: { code: 'cancelled', message: 'user sent /stop' } },
    ]);
    expect(h.of('approval.resolved')).toMatchObject([{ toolCallId: 'call-r', decision: 'cancelled' }]);
    expect(chat.status().state).toBe('idle');
    const late = await errorOf(chat.approve({ toolCallId: 'call-r', decision: 'approve' }));
    expect(isRuntimeError(late, 'not_found')).toBe(true);
    expect(ran).toEqual([]);
    await h.close();
  });

  it('ends as interrupted when an interrupting message arrives, which then runs', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall] }, { text: 'new topic' }], ran);
    expect(await chat.send('forget it', { mode: 'interrupt' })).toMatchObject({ disposition: 'interrupted' });
    await h.clock.advance(0);
    expect(h.of('run.ended').map((event) => [event.status, event.text])).toEqual([
      ['interrupted', ''],
      ['completed', 'new topic'],
    ]);
    await h.close();
  });

  it('continues when the pause expires, feeding an error result for the unanswered approval', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await pausedHarness([{ toolCalls: [refundCall] }, { text: 'no answer' }], ran, {
      limits: { pauseTimeoutMs: 60_000 },
    });
    await h.clock.advance(59_999);
    expect(chat.status().state).toBe('awaiting_approval');
    await h.clock.advance(1);
    expect(chat.status().state).toBe('idle');
    expect(h.of('run.ended')).toMatchObject([{ status: 'completed', text: 'no answer' }]);
    expect(h.of('approval.resolved')).toMatchObject([{ toolCallId: 'call-r', decision: 'expired' }]);
    expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', isError: true });
    expect(ran).toEqual([]);
    await h.close();
  });

  it('stays paused through runtime.close() instead of being aborted', async () => {
    const ran: unknown[] = [];
    const { h } = await pausedHarness([{ toolCalls: [refundCall] }], ran);
    await h.close();
    expect(h.of('run.ended')).toEqual([]);
  });
});
