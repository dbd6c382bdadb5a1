import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from 'agentlanes';
import { z } from 'zod';
import { startServer, untilTimers, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('createServer: session routes', () => {
  it('sends a message, waits for the run, and reads status, runs and transcript when posted over HTTP', async () => {
    harness = await startServer([{ text: 'Hello there', tokenDelayMs: 10 }]);
    const sent = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { id: 'm-1', text: 'hi', sender: { id: 'u1' }, mode: 'followup' },
    });
    expect(sent.status).toBe(202);
    const result = (await sent.json()) as { disposition: string; runId: string; messageId: string };
    expect(result).toMatchObject({ disposition: 'started', messageId: 'm-1' });

    // The run streams on the fake clock (one timer); the wait's timeout is the second.
    const waiting = harness.request('/v1/sessions/web:1/wait?timeoutMs=5000', { method: 'POST' });
    await untilTimers(harness.clock, 2);
    await harness.clock.advance(100);
    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(await waited.json()).toMatchObject({
      status: 'ended',
      run: { runId: result.runId, status: 'completed' },
    });

    const status = await harness.request('/v1/sessions/web:1');
    expect(await status.json()).toEqual({ key: 'web:1', state: 'idle', queued: 0 });
    const runs = (await (await harness.request('/v1/sessions/web:1/runs')).json()) as {
      runs: { runId: string; status: string; text: string }[];
    };
    expect(runs.runs).toMatchObject([{ runId: result.runId, status: 'completed', text: 'Hello there' }]);
    const transcript = (await (await harness.request('/v1/sessions/web:1/transcript')).json()) as {
      turns: { role: string }[];
    };
    expect(transcript.turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);

    const again = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { id: 'm-1', text: 'hi' },
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ disposition: 'duplicate', messageId: 'm-1' });
  });

  it('answers 409 with the code for a message the reject mode refuses, and stores nothing for it', async () => {
    harness = await startServer([{ hang: true }]);
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { text: 'first' } });
    const refused = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { id: 'r-1', text: 'second', mode: 'reject' },
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      disposition: 'rejected',
      error: { code: 'rejected_busy' },
    });
    const queue = await harness.request('/v1/sessions/web:1/queue');
    expect(await queue.json()).toEqual({ queue: [] });

    const waiting = harness.request('/v1/sessions/web:1/wait', { method: 'POST' });
    await untilTimers(harness.clock, 1);
    const aborted = await harness.request('/v1/sessions/web:1/abort', {
      method: 'POST',
      json: { reason: 'stop' },
    });
    expect(await aborted.json()).toEqual({ aborted: true });
    expect(await (await waiting).json()).toMatchObject({ status: 'ended', run: { status: 'aborted' } });
  });

  it('lists, cancels and clears the queue, and applies settings put over HTTP', async () => {
    harness = await startServer([{ hang: true }, { text: 'later' }]);
    const put = await harness.request('/v1/sessions/web:q/settings', {
      method: 'PUT',
      json: { mode: 'followup', debounceMs: 0 },
    });
    expect(put.status).toBe(204);
    for (const id of ['a', 'b', 'c']) {
      await harness.request('/v1/sessions/web:q/messages', {
        method: 'POST',
        json: { id, text: `message ${id}` },
      });
    }
    const listed = (await (await harness.request('/v1/sessions/web:q/queue')).json()) as {
      queue: { messageId: string; mode: string }[];
    };
    expect(listed.queue.map((item) => [item.messageId, item.mode])).toEqual([
      ['b', 'followup'],
      ['c', 'followup'],
    ]);
    const cancelled = await harness.request('/v1/sessions/web:q/queue/b', { method: 'DELETE' });
    expect(await cancelled.json()).toEqual({ cancelled: true });
    const missing = await harness.request('/v1/sessions/web:q/queue/b', { method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
    const cleared = await harness.request('/v1/sessions/web:q/queue', { method: 'DELETE' });
    expect(await cleared.json()).toEqual({ removed: 1 });
    await harness.request('/v1/sessions/web:q/abort', { method: 'POST' });
  });

  it('approves a high-risk call and supplies a deferred result through the tool-call routes', async () => {
    const refund = defineTool({
      name: 'refund',
      description: 'Refund an order',
      risk: 'high',
      input: z.object({ orderId: z.string() }),
      execute: ({ orderId }) => Promise.resolve({ refunded: orderId }),
    });
    const lookup = defineTool({
      name: 'lookup',
      description: 'Ask a human',
      input: z.object({ q: z.string() }),
    });
    harness = await startServer(
      [
        { toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'o-7' } }] },
        { toolCalls: [{ id: 'call-2', name: 'lookup', args: { q: 'size?' } }] },
        { text: 'done' },
      ],
      { tools: [refund, lookup] },
    );
    await harness.request('/v1/sessions/web:t/messages', { method: 'POST', json: { text: 'refund o-7' } });
    const paused = await harness.request('/v1/sessions/web:t/wait', { method: 'POST' });
    expect(await paused.json()).toMatchObject({ status: 'paused', state: 'awaiting_approval' });
    const pending = await harness.request('/v1/approvals');
    expect(await pending.json()).toMatchObject({
      pending: [
        {
          sessionKey: 'web:t',
          toolCallId: 'call-1',
          tool: 'refund',
          kind: 'approval',
          args: { orderId: 'o-7' },
        },
      ],
    });

    const unknown = await harness.request('/v1/sessions/web:t/approvals/nope', {
      method: 'POST',
      json: { decision: 'approve' },
    });
    expect(unknown.status).toBe(404);
    const approved = await harness.request('/v1/sessions/web:t/approvals/call-1', {
      method: 'POST',
      json: { decision: 'approve' },
    });
    expect(approved.status).toBe(204);
    const deferred = await harness.request('/v1/sessions/web:t/wait', { method: 'POST' });
    expect(await deferred.json()).toMatchObject({ status: 'paused', state: 'awaiting_tool_results' });
    expect(await (await harness.request('/v1/approvals')).json()).toMatchObject({
      pending: [{ toolCallId: 'call-2', kind: 'deferred' }],
    });
    const supplied = await harness.request('/v1/sessions/web:t/tool-results/call-2', {
      method: 'POST',
      json: { output: { answer: 'M' } },
    });
    expect(supplied.status).toBe(204);
    const ended = await harness.request('/v1/sessions/web:t/wait', { method: 'POST' });
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(await (await harness.request('/v1/approvals')).json()).toEqual({ pending: [] });
  });

  it('runs a plan posted to the plans route', async () => {
    const add = defineTool({
      name: 'add',
      description: 'Add',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => Promise.resolve({ sum: a + b }),
    });
    harness = await startServer([], { tools: [add] });
    const response = await harness.request('/v1/sessions/web:p/plans', {
      method: 'POST',
      json: { plan: { steps: [{ id: 's1', tool: 'add', args: { a: 1, b: 2 } }] }, options: { mode: 'auto' } },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: 'completed',
      results: [{ stepId: 's1', success: true, data: { sum: 3 } }],
    });
    const cycle = await harness.request('/v1/sessions/web:p/plans', {
      method: 'POST',
      json: {
        plan: {
          steps: [
            { id: 'x', tool: 'add', args: { a: 1, b: 1 }, dependsOn: ['y'] },
            { id: 'y', tool: 'add', args: { a: 1, b: 1 }, dependsOn: ['x'] },
          ],
        },
      },
    });
    expect(cycle.status).toBe(400);
    expect(await cycle.json()).toMatchObject({ error: { code: 'plan_cycle' } });
  });
});
