import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'agentlanes';
import type { RunRecord, TurnRecord } from 'agentlanes/ledger';
import { createHarness, type Harness } from '../support/runtime-harness.js';

/*
 * What a model, a tool or a provider's error says is output: it cannot be refused as a caller's input is, and one
 * U+0000 in it must not cost a run its record. Postgres holds no U+0000 in text (postgres-suites-b.test.ts runs this
 * file on it), so every ledger records U+FFFD in its place, and the client reads what the ledger holds.
 */

const nul = '\u0000';
const replaced = '\uFFFD';

/** A tool whose text output carries a NUL, as a file read or a page fetch may. */
const readTool = defineTool({
  name: 'read',
  description: 'Read a file',
  input: z.object({ path: z.string() }),
  execute: () => `bin${nul}ary`,
});

async function endOf(h: Harness, text: string) {
  const chat = h.runtime.session('chat:1');
  await chat.send({ id: text, text });
  const ended = await chat.waitForEnd({ timeoutMs: 5_000 });
  await h.settled();
  return { chat, ended };
}

function contents(turns: readonly TurnRecord[]): string[] {
  return turns.map((turn) => `${turn.role}: ${turn.content}`);
}

describe('output with a U+0000 (NUL)', () => {
  it('records a reply with a NUL with U+FFFD in its place, the same in its deltas, turn, run and run.ended', async () => {
    const h = createHarness([{ text: `before${nul}after` }]);
    const { chat, ended } = await endOf(h, 'hi');
    const text = `before${replaced}after`;
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed', text } });
    expect(
      h
        .of('assistant.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(text);
    expect(h.of('run.ended')).toMatchObject([{ status: 'completed', text }]);
    expect(await chat.runs()).toMatchObject([{ status: 'completed', text }] satisfies Partial<RunRecord>[]);
    expect(contents(await chat.transcript())).toEqual(['user: hi', `assistant: ${text}`]);
    await h.close();
  });

  it("records a tool's text output and a call id with a NUL, and the model reads what was recorded", async () => {
    const h = createHarness(
      [{ toolCalls: [{ id: `call${nul}1`, name: 'read', args: { path: 'a.bin' } }] }, { text: 'done' }],
      { tools: [readTool] },
    );
    const { chat, ended } = await endOf(h, 'read it');
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'done' } });
    const turns = await chat.transcript();
    expect(contents(turns)).toEqual([
      'user: read it',
      'assistant: ',
      `tool: bin${replaced}ary`,
      'assistant: done',
    ]);
    expect(turns[2]).toMatchObject({ toolCallId: `call${replaced}1` });
    expect(h.of('tool.succeeded')).toMatchObject([
      { toolCallId: `call${replaced}1`, tool: 'read', output: `bin${replaced}ary` },
    ]);
    const toolMessage = h.model.requests[1]?.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', content: `bin${replaced}ary` });
    await h.close();
  });

  it('records a run failed by a provider error whose message has a NUL, and the session goes on', async () => {
    const h = createHarness([{ error: { status: 400, message: `bad${nul}request` } }, { text: 'next' }]);
    const { chat, ended } = await endOf(h, 'one');
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'failed' } });
    const message = ended.status === 'ended' ? ended.run.error?.message : undefined;
    expect(message).toContain(`bad${replaced}request`);
    expect(message).not.toContain(nul);
    expect(await chat.runs()).toMatchObject([{ status: 'failed', error: { message } }]);
    const next = await endOf(h, 'two');
    expect(next.ended).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'next' } });
    await h.close();
  });
});
