import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError } from 'agentlanes';
import { errorOf } from '../support/error-of.js';
import { createHarness } from '../support/runtime-harness.js';

/** A deferred tool: no execute, its result comes from outside (a human, a webhook). */
const askUser = defineTool({
  name: 'ask_user',
  description: 'Ask the user to choose',
  input: z.object({ question: z.string() }),
  output: z.object({ choice: z.string() }),
});

const ask = (id: string, question = 'Which size?') => ({ id, name: 'ask_user', args: { question } });

async function paused(script: Parameters<typeof createHarness>[0], limits = {}) {
  const h = createHarness(script, { tools: [askUser], limits });
  const chat = h.runtime.session('web:1');
  await chat.send('order a shirt');
  const waited = await chat.waitForEnd();
  await h.settled();
  return { h, chat, waited };
}

describe('session.supplyToolResult', () => {
  it('pauses the run awaiting_tool_results and resumes it with the supplied output', async () => {
    const { h, chat, waited } = await paused([{ toolCalls: [ask('call-1')] }, { text: 'Size M it is.' }]);
    expect(waited).toMatchObject({
      status: 'paused',
      state: 'awaiting_tool_results',
      waiting: [{ toolCallId: 'call-1', tool: 'ask_user', needs: 'deferred' }],
    });
    expect(chat.status().state).toBe('awaiting_tool_results');
    expect(h.of('tool.deferred')).toMatchObject([{ toolCallId: 'call-1', tool: 'ask_user' }]);
    expect(h.of('approval.requested')).toEqual([]);

    await chat.supplyToolResult({ toolCallId: 'call-1', output: { choice: 'M' } });
    expect(await chat.waitForEnd()).toMatchObject({ run: { status: 'completed', text: 'Size M it is.' } });
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      toolCallId: 'call-1',
      tool: 'ask_user',
      content: '{"choice":"M"}',
    });
    expect(h.of('tool.supplied')).toMatchObject([{ toolCallId: 'call-1', isError: false }]);
    await h.close();
  });

  it('feeds a supplied error back to the model as an error result', async () => {
    const { h, chat } = await paused([{ toolCalls: [ask('call-1')] }, { text: 'ok' }]);
    await chat.supplyToolResult({ toolCallId: 'call-1', error: 'the user left' });
    await chat.waitForEnd();
    expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({
      content: 'Error: the user left',
      isError: true,
    });
    await h.close();
  });

  it('waits for every deferred call of the batch before it continues', async () => {
    const { h, chat } = await paused([
      { toolCalls: [ask('call-1'), ask('call-2', 'Colour?')] },
      { text: 'ok' },
    ]);
    await chat.supplyToolResult({ toolCallId: 'call-2', output: { choice: 'red' } });
    expect(chat.status().state).toBe('awaiting_tool_results');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused', waiting: [{ toolCallId: 'call-1' }] });
    await chat.supplyToolResult({ toolCallId: 'call-1', output: { choice: 'L' } });
    await chat.waitForEnd();
    const results = (h.model.requests[1]?.messages ?? []).filter((message) => message.role === 'tool');
    expect(results.map((message) => message.content)).toEqual(['{"choice":"L"}', '{"choice":"red"}']);
    await h.close();
  });

  it('gives calls left without a result an error result when the pause expires and the run continues', async () => {
    const { h, chat } = await paused([{ toolCalls: [ask('call-1'), ask('call-2')] }, { text: 'partial' }], {
      pauseTimeoutMs: 1_000,
    });
    await chat.supplyToolResult({ toolCallId: 'call-1', output: { choice: 'S' } });
    await h.clock.advance(1_000);
    expect(h.of('run.ended')).toMatchObject([{ status: 'completed', text: 'partial' }]);
    const results = (h.model.requests[1]?.messages ?? []).filter((message) => message.role === 'tool');
    expect(results.map((message) => [message.content, message.isError ?? false])).toEqual([
      ['{"choice":"S"}', false],
      ['Error: no result was supplied for this call.', true],
    ]);
    expect(h.of('tool.failed')).toMatchObject([{ toolCallId: 'call-2', error: { code: 'tool_failed' } }]);
    await h.close();
  });

  it('refuses output the tool schema rejects, unknown and settled ids, and approvals, changing nothing', async () => {
    const { h, chat } = await paused([{ toolCalls: [ask('call-1'), ask('call-2')] }, { text: 'ok' }]);
    const schema = await errorOf(chat.supplyToolResult({ toolCallId: 'call-1', output: { size: 3 } }));
    expect(isRuntimeError(schema, 'invalid_input')).toBe(true);
    const unknown = await errorOf(chat.supplyToolResult({ toolCallId: 'call-9', output: { choice: 'x' } }));
    expect(isRuntimeError(unknown, 'not_found')).toBe(true);
    const both = await errorOf(chat.supplyToolResult({ toolCallId: 'call-1', output: 1, error: 'x' }));
    expect(isRuntimeError(both, 'invalid_input')).toBe(true);
    const approval = await errorOf(chat.approve({ toolCallId: 'call-1', decision: 'approve' }));
    expect(isRuntimeError(approval, 'invalid_input')).toBe(true);
    expect(h.of('tool.supplied')).toEqual([]);

    await chat.supplyToolResult({ toolCallId: 'call-1', output: { choice: 'x' } });
    const again = await errorOf(chat.supplyToolResult({ toolCallId: 'call-1', output: { choice: 'y' } }));
    expect(isRuntimeError(again, 'invalid_input')).toBe(true);
    expect(h.of('tool.supplied')).toHaveLength(1);
    await h.close();
  });
});
