import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError, type RuntimeOptions } from 'agentlanes';
import type { Script } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

const owner = { id: 'alice', role: 'owner' };
const admin = { id: 'ada', role: 'admin' };
const member = { id: 'bob', role: 'member' };

function refundTool(calls: string[], risk: 'low' | 'high') {
  return defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk,
    input: z.object({ orderId: z.string() }),
    execute: ({ orderId }) => {
      calls.push(orderId);
      return 'refunded';
    },
  });
}

function setup(script: Script, options: Partial<RuntimeOptions>) {
  const h = createHarness(script, options);
  return { h, chat: h.runtime.session('telegram:-1') };
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'accepted',
    (error: unknown) => error,
  );
}

describe('authority control of approvals', () => {
  it('refuses the approval to the sender who asked for the action and to a member, and takes an admin', async () => {
    const calls: string[] = [];
    const { h, chat } = setup(
      [{ toolCalls: [{ id: 'c1', name: 'refund', args: { orderId: '42' } }] }, { text: 'done' }],
      { tools: [refundTool(calls, 'high')], authority: {} },
    );
    await chat.send({ id: 'm0', text: 'refund 42', sender: owner });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused' });
    const byRequester = await refusal(chat.approve({ toolCallId: 'c1', decision: 'approve', by: owner }));
    expect(isRuntimeError(byRequester, 'forbidden')).toBe(true);
    const byMember = await refusal(chat.approve({ toolCallId: 'c1', decision: 'approve', by: member }));
    expect(isRuntimeError(byMember, 'forbidden')).toBe(true);
    expect(calls).toEqual([]);
    await chat.approve({ toolCallId: 'c1', decision: 'approve', by: admin });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(calls).toEqual(['42']);
    await h.close();
  });

  it('lets the requester approve when control.approve.requester is configured so', async () => {
    const calls: string[] = [];
    const { h, chat } = setup(
      [{ toolCalls: [{ id: 'c1', name: 'refund', args: { orderId: '7' } }] }, { text: 'done' }],
      {
        tools: [refundTool(calls, 'high')],
        authority: { control: { approve: { any: 'admin', requester: true } } },
      },
    );
    await chat.send({ id: 'm0', text: 'refund 7', sender: owner });
    await chat.waitForEnd();
    await chat.approve({ toolCallId: 'c1', decision: 'approve', by: owner });
    await chat.waitForEnd();
    expect(calls).toEqual(['7']);
    await h.close();
  });

  it('refuses authority options that name an unknown role at construction', () => {
    const bad = () =>
      createHarness([], { authority: { roles: ['boss', 'customer'], tools: { guest: { deny: ['x'] } } } });
    expect(bad).toThrow(/unknown role "guest"/);
  });
});

describe('authority of subagents', () => {
  it("gives a guest's subagent no more tools than the guest run had", async () => {
    const calls: string[] = [];
    const task = 'find the order';
    const script: Script = (request) => {
      const first = request.messages[0];
      if (first?.role === 'user' && first.content.endsWith(task)) return { text: 'child done' };
      const result = request.messages.find((message) => message.role === 'tool');
      if (result === undefined) return { toolCalls: [{ id: 'c1', name: 'spawn_subagent', args: { task } }] };
      return { text: 'parent done' };
    };
    const { h, chat } = setup(script, {
      tools: [refundTool(calls, 'low')],
      subagents: { enabled: true },
      authority: { tools: { admin: { deny: ['refund'] } } },
    });
    await chat.send({ id: 'm0', text: 'go', sender: { id: 'gus', role: 'guest' } });
    expect(await chat.waitForEnd()).toMatchObject({ run: { status: 'completed', text: 'parent done' } });
    const names = h.model.requests.map((request) => request.tools.map((tool) => tool.name).sort());
    expect(names[0]).toEqual(['spawn_subagent']);
    expect(names[1]).not.toContain('refund');
    expect(h.model.requests[1]?.messages[0]?.content).toBe(`[sender id="run_1" role=guest]\n${task}`);
    await h.close();
  });
});
