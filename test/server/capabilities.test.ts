import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, createRuntime, defineTool } from 'agentlanes';
import { createServer } from 'agentlanes/server';
import { scriptedModel, type ScriptEntry, type ScriptedRequest } from 'agentlanes/testing';
import { adminToken, startServer, webToken, type ServerHarness } from './server-harness.js';

/** A `web:` token that may also approve (a support agent's console, say). */
const approverToken = 'web-approver-0123456789';
/** A `web:` token that may approve and nothing else. */
const approveOnlyToken = 'web-approve-only-0123456789';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The model: `refund` asks for a refund of 5, `lookup` for a deferred lookup, `hang` never answers. */
function script(request: ScriptedRequest): ScriptEntry {
  const index = request.messages.findLastIndex((message) => message.role === 'user');
  const last = request.messages[index];
  const text = last?.role === 'user' ? last.content : '';
  const answered = request.messages.slice(index).some((message) => message.role === 'tool');
  if (answered) return { text: 'done' };
  if (text === 'refund') {
    return { toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'o-1', amount: 5 } }] };
  }
  if (text === 'lookup') return { toolCalls: [{ id: 'call-2', name: 'lookup', args: { q: 'size?' } }] };
  if (text === 'hang') return { hang: true };
  return { text: 'ok' };
}

/** A harness whose refund tool records every execution, with the admin, web and approver tokens. */
async function startWithRefunds(): Promise<{ harness: ServerHarness; refunds: unknown[] }> {
  const refunds: unknown[] = [];
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk: 'high',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    execute: (args) => {
      refunds.push(args);
      return Promise.resolve({ refunded: args.amount });
    },
  });
  const lookup = defineTool({
    name: 'lookup',
    description: 'Ask a human',
    input: z.object({ q: z.string() }),
  });
  const started = await startServer(
    script,
    { tools: [refund, lookup] },
    {
      auth: {
        tokens: [
          { token: adminToken },
          { token: webToken, sessionKeyPrefixes: ['web:'] },
          { token: approverToken, sessionKeyPrefixes: ['web:'], can: ['send', 'read', 'abort', 'approve'] },
          { token: approveOnlyToken, sessionKeyPrefixes: ['web:'], can: ['approve'] },
        ],
      },
    },
  );
  return { harness: started, refunds };
}

/** The 403 body of a missing capability. */
function lacking(capability: string) {
  return {
    error: { code: 'forbidden', message: `this token lacks the "${capability}" capability`, capability },
  };
}

const refundPlan = {
  plan: { steps: [{ id: 'r', tool: 'refund', args: { orderId: 'o-9', amount: 1_000_000 } }] },
  options: { approvedSteps: ['r'] },
};

describe('createServer: token capabilities', () => {
  it('refuses a scoped token pre-approved plan steps, and runs them for an approver or admin token', async () => {
    const started = await startWithRefunds();
    harness = started.harness;
    const refused = await harness.request('/v1/sessions/web:1/plans', {
      method: 'POST',
      token: webToken,
      json: refundPlan,
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual(lacking('approve'));
    // Even an empty list of approved steps is an approval decision.
    const empty = await harness.request('/v1/sessions/web:1/plans', {
      method: 'POST',
      token: webToken,
      json: { ...refundPlan, options: { approvedSteps: [] } },
    });
    expect(empty.status).toBe(403);
    expect(started.refunds).toEqual([]);
    expect(await (await harness.request('/v1/sessions/web:1/runs')).json()).toEqual({ runs: [] });

    const approver = await harness.request('/v1/sessions/web:1/plans', {
      method: 'POST',
      token: approverToken,
      json: refundPlan,
    });
    expect(approver.status).toBe(200);
    const admin = await harness.request('/v1/sessions/web:2/plans', { method: 'POST', json: refundPlan });
    expect(await admin.json()).toMatchObject({ status: 'completed' });
    expect(started.refunds).toEqual([
      { orderId: 'o-9', amount: 1_000_000 },
      { orderId: 'o-9', amount: 1_000_000 },
    ]);
  });

  it('refuses a scoped token to approve or edit a pending call, and lets a token with "approve" do it', async () => {
    const started = await startWithRefunds();
    harness = started.harness;
    const sent = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      token: webToken,
      json: { text: 'refund' },
    });
    expect(sent.status).toBe(202);
    const paused = await harness.request('/v1/sessions/web:1/wait', { method: 'POST', token: webToken });
    expect(await paused.json()).toMatchObject({ status: 'paused', state: 'awaiting_approval' });
    for (const decision of [
      { decision: 'edit', args: { orderId: 'o-1', amount: 5000 } },
      { decision: 'approve' },
      { decision: 'approve', remember: 'session' },
      { decision: 'reject' },
    ]) {
      const response = await harness.request('/v1/sessions/web:1/approvals/call-1', {
        method: 'POST',
        token: webToken,
        json: decision,
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual(lacking('approve'));
    }
    const pending = await harness.request('/v1/approvals', { token: webToken });
    expect(await pending.json()).toMatchObject({
      pending: [{ toolCallId: 'call-1', args: { orderId: 'o-1', amount: 5 } }],
    });
    expect(started.refunds).toEqual([]);
    expect(harness.runtime.session('web:1').status().state).toBe('awaiting_approval');

    const approved = await harness.request('/v1/sessions/web:1/approvals/call-1', {
      method: 'POST',
      token: approveOnlyToken,
      json: { decision: 'approve' },
    });
    expect(approved.status).toBe(204);
    const ended = await harness.request('/v1/sessions/web:1/wait', { method: 'POST', token: webToken });
    expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(started.refunds).toEqual([{ orderId: 'o-1', amount: 5 }]);
  });

  it('refuses a scoped token to supply results, configure, and edit the queue, which an admin token may', async () => {
    const started = await startWithRefunds();
    harness = started.harness;
    await harness.request('/v1/sessions/web:2/messages', {
      method: 'POST',
      token: webToken,
      json: { text: 'lookup' },
    });
    const deferred = await harness.request('/v1/sessions/web:2/wait', { method: 'POST', token: webToken });
    expect(await deferred.json()).toMatchObject({ status: 'paused', state: 'awaiting_tool_results' });
    const supply = { method: 'POST', json: { output: { size: 'M' } } } as const;
    const refusedSupply = await harness.request('/v1/sessions/web:2/tool-results/call-2', {
      ...supply,
      token: webToken,
    });
    expect(refusedSupply.status).toBe(403);
    expect(await refusedSupply.json()).toEqual(lacking('approve'));
    expect(harness.runtime.session('web:2').status().state).toBe('awaiting_tool_results');

    const settings = { method: 'PUT', json: { mode: 'followup', debounceMs: 0 } } as const;
    const refusedSettings = await harness.request('/v1/sessions/web:q/settings', {
      ...settings,
      token: webToken,
    });
    expect(refusedSettings.status).toBe(403);
    expect(await refusedSettings.json()).toEqual(lacking('operate'));
    expect((await harness.request('/v1/sessions/web:q/settings', settings)).status).toBe(204);

    await harness.request('/v1/sessions/web:q/messages', {
      method: 'POST',
      token: webToken,
      json: { text: 'hang' },
    });
    const queued = await harness.request('/v1/sessions/web:q/messages', {
      method: 'POST',
      token: webToken,
      json: { id: 'q-1', text: 'later' },
    });
    expect(await queued.json()).toMatchObject({ disposition: 'queued' });
    for (const path of ['/v1/sessions/web:q/queue/q-1', '/v1/sessions/web:q/queue']) {
      const refused = await harness.request(path, { method: 'DELETE', token: webToken });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual(lacking('operate'));
    }
    const queue = await harness.request('/v1/sessions/web:q/queue', { token: webToken });
    expect(await queue.json()).toMatchObject({ queue: [{ messageId: 'q-1' }] });
    expect((await harness.request('/v1/sessions/web:q/queue/q-1', { method: 'DELETE' })).status).toBe(200);

    // What a scoped token keeps by default: sending, reading, aborting.
    const aborted = await harness.request('/v1/sessions/web:q/abort', { method: 'POST', token: webToken });
    expect(await aborted.json()).toEqual({ aborted: true });
    expect((await harness.request('/v1/sessions/web:2/tool-results/call-2', supply)).status).toBe(204);
  });

  it('holds exactly the capabilities a token names, and tells a token what it may do', async () => {
    const readOnly = 'read-only-token-0123456789';
    harness = await startServer(
      [],
      {},
      { auth: { tokens: [{ token: adminToken }, { token: readOnly, can: ['read'] }] } },
    );
    const sent = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      token: readOnly,
      json: { text: 'hi' },
    });
    expect(sent.status).toBe(403);
    expect(await sent.json()).toEqual(lacking('send'));
    const aborted = await harness.request('/v1/sessions/web:1/abort', { method: 'POST', token: readOnly });
    expect(await aborted.json()).toEqual(lacking('abort'));
    const chat = await harness.request('/v1/sessions/web:1/chat', {
      method: 'POST',
      token: readOnly,
      json: { messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }] },
    });
    expect(chat.status).toBe(403);
    expect((await harness.request('/v1/stats', { token: readOnly })).status).toBe(200);
    const own = await harness.request('/v1/capabilities', { token: readOnly });
    expect(await own.json()).toEqual({ can: ['read'] });
    const admin = await harness.request('/v1/capabilities');
    expect(await admin.json()).toEqual({ can: ['send', 'read', 'abort', 'approve', 'operate'] });
    await harness.close();
    harness = await startServer([]);
    const scoped = await harness.request('/v1/capabilities', { token: webToken });
    expect(await scoped.json()).toEqual({ can: ['send', 'read', 'abort'], sessionKeyPrefixes: ['web:'] });
  });

  it('refuses an unknown capability at construction', async () => {
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: { scripted: scriptedModel([]) },
      model: { provider: 'scripted', model: 'm' },
    });
    expect(() =>
      createServer(runtime, { auth: { tokens: [{ token: adminToken, can: ['fly' as 'read'] }] } }),
    ).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: expect.stringMatching(/can/) as string }),
    );
    expect(() => createServer(runtime, { auth: { tokens: [{ token: adminToken, can: [] }] } })).toThrow(
      /can/,
    );
    await runtime.close();
  });
});
