import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, isRuntimeError, type RuntimeOptions } from 'agentlanes';
import type { Script } from 'agentlanes/testing';
import { maxInputDepth } from '../../src/core/input-bounds.js';
import { errorOf } from '../support/error-of.js';
import { freshSchema, postgresUrl } from '../support/postgres.js';
import { createHarness } from '../support/runtime-harness.js';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { adminToken, startServer } from '../server/server-harness.js';

/** `{ a: { a: … 'leaf' } }`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

/** The same value as JSON text, built without JSON.stringify (which overflows the stack on it). */
function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
}

/** A high-risk tool whose `note` takes any JSON, so edited args reach the runtime unchecked by the tool. */
function refundTool(ran: unknown[]) {
  return defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk: 'high',
    input: z.object({ orderId: z.string(), note: z.unknown().optional() }),
    execute: (args) => {
      ran.push(args);
      return { refunded: args.orderId };
    },
  });
}

const refundCall = { id: 'call-r', name: 'refund', args: { orderId: 'A1' } };
const pausingScript: Script = [{ toolCalls: [refundCall] }, { text: 'Refunded.' }];

const ledgers: Record<string, () => RuntimeOptions['ledger']> = {
  memory: () => createMemoryLedger(),
  sqlite: () => ({ path: tempLedgerPath('input-bounds') }),
  postgres: () => ({ postgres: { connectionString: postgresUrl, schema: freshSchema() } }),
};

function expectInvalidInput(error: unknown): void {
  expect(isRuntimeError(error, 'invalid_input'), `expected invalid_input, got ${String(error)}`).toBe(true);
}

describe.each(Object.keys(ledgers))('input bounds on the %s ledger', (kind) => {
  const ledger = ledgers[kind] as () => RuntimeOptions['ledger'];

  async function paused(ran: unknown[]) {
    const h = createHarness(pausingScript, { ledger: ledger(), tools: [refundTool(ran)] });
    const chat = h.runtime.session('telegram:1');
    await chat.send('refund order A1');
    expect(await chat.waitForEnd({ timeoutMs: 60_000 })).toMatchObject({ status: 'paused' });
    await h.settled();
    return { h, chat };
  }

  it('refuses an edit nested 100,000 deep with invalid_input and keeps the approval usable when args are too deep', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await paused(ran);
    const error = await errorOf(
      chat.approve({
        toolCallId: 'call-r',
        decision: 'edit',
        args: { orderId: 'A1', note: nested(100_000) },
      }),
    );
    expectInvalidInput(error);
    await h.settled();
    expect(chat.status()).toMatchObject({ state: 'awaiting_approval' });
    expect(h.of('approval.resolved')).toEqual([]);
    await chat.approve({ toolCallId: 'call-r', decision: 'edit', args: { orderId: 'A2', note: nested(10) } });
    expect(await chat.waitForEnd({ timeoutMs: 60_000 })).toMatchObject({
      status: 'ended',
      run: { status: 'completed' },
    });
    expect(ran).toEqual([{ orderId: 'A2', note: nested(10) }]);
    await h.close();
  });

  it('refuses an edit one level past the depth bound and accepts one at it', async () => {
    const ran: unknown[] = [];
    const { h, chat } = await paused(ran);
    // The approval input is the root (depth 0), `args` depth 1, `note` depth 2.
    const deepest = maxInputDepth - 2;
    expectInvalidInput(
      await errorOf(
        chat.approve({
          toolCallId: 'call-r',
          decision: 'edit',
          args: { orderId: 'A1', note: nested(deepest + 1) },
        }),
      ),
    );
    await chat.approve({
      toolCallId: 'call-r',
      decision: 'edit',
      args: { orderId: 'A1', note: nested(deepest) },
    });
    expect(await chat.waitForEnd({ timeoutMs: 60_000 })).toMatchObject({ status: 'ended' });
    expect(ran).toHaveLength(1);
    await h.close();
  });

  it('refuses plan step args nested 100,000 deep with invalid_input and records no run', async () => {
    const ran: unknown[] = [];
    const h = createHarness([], { ledger: ledger(), tools: [refundTool(ran)] });
    const chat = h.runtime.session('telegram:1');
    const plan = { steps: [{ id: 'one', tool: 'refund', args: { orderId: 'A1', note: nested(100_000) } }] };
    expectInvalidInput(await errorOf(chat.executePlan(plan)));
    await h.settled();
    expect(await chat.runs()).toEqual([]);
    expect(h.events).toEqual([]);
    expect(ran).toEqual([]);
    await h.close();
  });

  it('refuses U+0000 in a message text, id, thread, sender or part and in a session key with invalid_input and records nothing', async () => {
    const h = createHarness([{ text: 'ok' }], { ledger: ledger() });
    const chat = h.runtime.session('telegram:1');
    const bad = [
      { text: 'a\u0000b' },
      { id: 'id\u0000', text: 'hi' },
      { thread: 't\u0000', text: 'hi' },
      { sender: { id: 'u\u0000' }, text: 'hi' },
      { parts: [{ type: 'text' as const, text: 'p\u0000' }] },
    ];
    for (const message of bad) expectInvalidInput(await errorOf(chat.send(message)));
    expectInvalidInput(await errorOf(chat.abort({ reason: 'stop\u0000' })));
    expectInvalidInput(
      await errorOf(Promise.resolve().then(() => h.runtime.session('telegram:\u00001').send('hi'))),
    );
    await h.settled();
    expect(h.events).toEqual([]);
    // The same ledger takes the next good message.
    expect(await chat.send({ id: 'good', text: 'hello' })).toMatchObject({ disposition: 'started' });
    expect(await chat.waitForEnd({ timeoutMs: 60_000 })).toMatchObject({ status: 'ended' });
    await h.close();
  });
});

describe('input bounds over HTTP', () => {
  async function pausedServer(ran: unknown[]) {
    const h = await startServer(pausingScript, { tools: [refundTool(ran)] });
    const sent = await h.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { text: 'refund A1' },
    });
    expect(sent.status).toBe(202);
    expect(await h.runtime.session('web:1').waitForEnd({ timeoutMs: 60_000 })).toMatchObject({
      status: 'paused',
    });
    return h;
  }

  const post = (body: string) => ({
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
  });

  it('answers 400 invalid_input to an edit nested 100,000 deep and still takes the approval after it', async () => {
    const ran: unknown[] = [];
    const h = await pausedServer(ran);
    const body = `{"decision":"edit","args":{"orderId":"A1","note":${nestedJson(100_000)}}}`;
    const refused = await h.request('/v1/sessions/web:1/approvals/call-r', post(body));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: 'invalid_input' } });
    const status = await h.request('/v1/sessions/web:1');
    expect(await status.json()).toMatchObject({ state: 'awaiting_approval' });
    const approved = await h.request('/v1/sessions/web:1/approvals/call-r', {
      method: 'POST',
      json: { decision: 'approve' },
    });
    expect(approved.status).toBe(204);
    expect(await h.runtime.session('web:1').waitForEnd({ timeoutMs: 60_000 })).toMatchObject({
      status: 'ended',
    });
    expect(ran).toEqual([{ orderId: 'A1' }]);
    await h.close();
  });

  it('answers 400 invalid_input to plan step args nested 100,000 deep and records no run', async () => {
    const h = await startServer([], { tools: [refundTool([])] });
    const body = `{"plan":{"steps":[{"id":"one","tool":"refund","args":{"orderId":"A1","note":${nestedJson(100_000)}}}]}}`;
    const refused = await h.request('/v1/sessions/web:1/plans', post(body));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: 'invalid_input' } });
    expect(await h.runtime.session('web:1').runs()).toEqual([]);
    await h.close();
  });

  it('answers 400 invalid_input to U+0000 in a message and in a session key', async () => {
    const h = await startServer([{ text: 'ok' }]);
    const inText = await h.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { text: 'a\u0000b' },
    });
    expect(inText.status).toBe(400);
    expect(await inText.json()).toMatchObject({ error: { code: 'invalid_input' } });
    const inKey = await h.request('/v1/sessions/web:%00/messages', { method: 'POST', json: { text: 'hi' } });
    expect(inKey.status).toBe(400);
    expect(await inKey.json()).toMatchObject({ error: { code: 'invalid_input' } });
    expect(await h.runtime.session('web:1').runs()).toEqual([]);
    await h.close();
  });
});
