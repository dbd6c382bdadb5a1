import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RuntimeEvent } from 'agentlanes';
import type { ScriptEntry, ScriptedRequest } from 'agentlanes/testing';
import { startServer, type ServerHarness } from '../server/server-harness.js';

const ownerToken = 'group-owner-token-0123456789';
const memberToken = 'group-member-token-0123456789';
const guestToken = 'group-guest-token-0123456789';
const key = 'web:group-1';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** `refund …` asks for the refund tool, `hang` never answers, `report` streams slowly, anything else is text. */
function script(request: ScriptedRequest): ScriptEntry {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: 'done' };
  const text = last?.role === 'user' ? last.content : '';
  if (text.endsWith('refund 42'))
    return { toolCalls: [{ id: 'c1', name: 'refund', args: { orderId: '42' } }] };
  if (text.endsWith('report')) return { text: 'a b c d e f', tokenDelayMs: 100 };
  return { text: 'ok' };
}

async function start(refunds: string[] = []): Promise<ServerHarness> {
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an order',
    input: z.object({ orderId: z.string() }),
    execute: ({ orderId }) => {
      refunds.push(orderId);
      return 'refunded';
    },
  });
  const tokens = [
    { token: ownerToken, sessionKeyPrefixes: ['web:'], role: 'owner' },
    { token: memberToken, sessionKeyPrefixes: ['web:'], role: 'member' },
    { token: guestToken, sessionKeyPrefixes: ['web:'], role: 'guest' },
  ];
  return startServer(
    script,
    { tools: [refund], authority: { tools: { admin: { deny: ['refund'] } } } },
    { auth: { tokens } },
  );
}

function post(path: string, token: string, json: unknown): Promise<Response> {
  return (harness as ServerHarness).request(path, { method: 'POST', token, json });
}

describe('tokens of different roles over HTTP', () => {
  it("sends with the token's role, never runs the owner-only tool for a guest, and refuses a claimed higher role", async () => {
    const refunds: string[] = [];
    harness = await start(refunds);
    const claimed = await post(`/v1/sessions/${key}/messages`, guestToken, {
      id: 'm0',
      text: 'refund 42',
      sender: { id: 'gus', role: 'owner' },
    });
    expect(claimed.status).toBe(403);
    expect(await claimed.json()).toMatchObject({ error: { code: 'forbidden' } });
    const byGuest = await post(`/v1/sessions/${key}/messages`, guestToken, { id: 'm1', text: 'refund 42' });
    expect(byGuest.status).toBe(202);
    await harness.runtime.session(key).waitForEnd();
    expect(refunds).toEqual([]);
    const byOwner = await post(`/v1/sessions/${key}/messages`, ownerToken, {
      id: 'm2',
      text: 'refund 42',
      sender: { id: 'alice', name: 'Alice' },
    });
    expect(byOwner.status).toBe(202);
    await harness.runtime.session(key).waitForEnd();
    expect(refunds).toEqual(['42']);
    const session = harness.runtime.session(key);
    const received = (await session.events({ after: 0 })[Symbol.asyncIterator]().next())
      .value as RuntimeEvent;
    expect(received).toMatchObject({ type: 'message.received', messageId: 'm1', senderRole: 'guest' });
  });

  it('tells a client the role its token speaks with', async () => {
    harness = await start();
    const response = await harness.request('/v1/capabilities', { token: memberToken });
    expect(await response.json()).toEqual({
      can: ['send', 'read', 'abort'],
      sessionKeyPrefixes: ['web:'],
      role: 'member',
    });
  });

  it("refuses a guest's and a member's abort of the owner's run, and lets the owner abort it", async () => {
    harness = await start();
    await post(`/v1/sessions/${key}/messages`, ownerToken, {
      id: 'm0',
      text: 'report',
      sender: { id: 'alice' },
    });
    for (const token of [guestToken, memberToken]) {
      const refused = await post(`/v1/sessions/${key}/abort`, token, { reason: 'stop' });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: { code: 'forbidden' } });
    }
    expect(harness.runtime.session(key).status().runId).toBe('run_1');
    const stopped = await post(`/v1/sessions/${key}/abort`, ownerToken, { reason: 'stop' });
    expect(await stopped.json()).toEqual({ aborted: true });
    expect(await harness.runtime.session(key).waitForEnd()).toMatchObject({ run: { status: 'aborted' } });
  });

  it('splits a mixed collect burst from tokens of different roles into runs by authority, in order', async () => {
    harness = await start();
    await post(`/v1/sessions/${key}/messages`, ownerToken, { id: 'm0', text: 'report' });
    const burst: [string, string][] = [
      ['m1', ownerToken],
      ['m2', ownerToken],
      ['m3', guestToken],
      ['m4', memberToken],
    ];
    for (const [id, token] of burst) {
      const response = await post(`/v1/sessions/${key}/messages`, token, { id, text: `note ${id}` });
      expect(await response.json()).toMatchObject({ disposition: 'collected' });
    }
    for (let step = 0; step < 10; step++) await harness.clock.advance(1000);
    await harness.runtime.session(key).waitForEnd();
    const runs: string[][] = [];
    for await (const event of harness.runtime.session(key).events({ after: 0 })) {
      if (event.type === 'run.started') runs.push(event.messageIds);
      if (event.type === 'run.ended' && event.runId === 'run_4') break;
    }
    expect(runs).toEqual([['m0'], ['m1', 'm2'], ['m3'], ['m4']]);
  });
});
