import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'agentlanes';
import { type ModelMessage } from 'agentlanes/providers';
import { createHarness } from '../support/runtime-harness.js';

// Older turns worth summarising: longer than the summary that replaces them.
const longA = `answer a ${'with a lot of detail '.repeat(20)}`.trim();
const overflow = { error: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' } };

async function exchange(h: ReturnType<typeof createHarness>, text: string) {
  const chat = h.runtime.session('telegram:1');
  await chat.send(text);
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  return ended;
}

describe('the turn loop on a context overflow', () => {
  it('summarises the older turns with the model and retries with the shorter conversation', async () => {
    const h = createHarness(
      [
        { text: longA },
        { text: 'answer b' },
        { text: 'answer c' },
        overflow,
        { text: 'SUMMARY' },
        { text: 'answer d' },
      ],
      { queue: { mode: 'followup', debounceMs: 0 } },
    );
    for (const text of ['a', 'b', 'c']) await exchange(h, text);
    const result = await exchange(h, 'd');
    expect(result).toMatchObject({ run: { status: 'completed', text: 'answer d' } });
    const summaryRequest = h.model.requests[4];
    expect(summaryRequest?.tools).toEqual([]);
    expect(summaryRequest?.messages[0]?.content).toContain(`user: a\nassistant: ${longA}`);
    expect(h.model.requests[5]?.messages).toEqual([
      { role: 'user', content: 'Summary of the earlier conversation:\nSUMMARY' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: 'answer b' },
      { role: 'user', content: 'c' },
      { role: 'assistant', content: 'answer c' },
      { role: 'user', content: 'd' },
    ]);
    expect(h.of('compaction.started')).toMatchObject([{ attempt: 1, messages: 7 }]);
    expect(h.of('compaction.ended')).toMatchObject([{ attempt: 1, before: 7, after: 6, truncated: false }]);
    expect(
      h
        .of('assistant.delta')
        .map((event) => event.delta)
        .join(''),
    ).not.toContain('SUMMARY');
    await h.close();
  });

  it('uses the configured compactor', async () => {
    const seen: number[] = [];
    const h = createHarness([overflow, { text: 'fits now' }], {
      compactor: ({ messages }) => {
        seen.push(messages.length);
        return Promise.resolve([{ role: 'user', content: 'just this' } satisfies ModelMessage]);
      },
    });
    expect(await exchange(h, 'one '.repeat(50))).toMatchObject({
      run: { status: 'completed', text: 'fits now' },
    });
    expect(seen).toEqual([1]);
    expect(h.model.requests[1]?.messages).toEqual([{ role: 'user', content: 'just this' }]);
    await h.close();
  });

  it('fails with context_overflow after three compactions that do not help and nothing to truncate', async () => {
    const h = createHarness([overflow], { compactor: ({ messages }) => Promise.resolve([...messages]) });
    expect(await exchange(h, 'a')).toMatchObject({
      run: { status: 'failed', error: { code: 'context_overflow' } },
    });
    expect(h.of('compaction.started').map((event) => event.attempt)).toEqual([1, 2, 3]);
    expect(h.model.calls).toBe(1);
    await h.close();
  });

  it('truncates an oversized tool result once as the last resort', async () => {
    const big = defineTool({
      name: 'dump',
      description: 'returns a lot',
      input: z.object({}),
      execute: () => 'x'.repeat(9000),
    });
    const h = createHarness([{ toolCalls: [{ name: 'dump', args: {} }] }, overflow, { text: 'done' }], {
      tools: [big],
      compactor: ({ messages }) => Promise.resolve([...messages]),
    });
    expect(await exchange(h, 'a')).toMatchObject({ run: { status: 'completed', text: 'done' } });
    const tool = h.model.requests[2]?.messages.find((message) => message.role === 'tool');
    expect(tool?.content.length).toBeLessThan(2100);
    expect(tool?.content).toContain('[… 7000 characters truncated]');
    expect(h.of('compaction.ended').at(-1)).toMatchObject({ truncated: true });
    await h.close();
  });

  it('never sends the summary request without a credential when every auth profile is cooling', async () => {
    const lastUser = (messages: readonly ModelMessage[]) => messages.at(-1)?.content;
    const h = createHarness(
      (request) => {
        if (lastUser(request.messages) === 'a')
          return { ...overflow, afterText: 'one two', tokenDelayMs: 100 };
        if (lastUser(request.messages) === 'b') return { error: { status: 429, message: 'rate limit' } };
        return { text: 'SUMMARY' };
      },
      {
        authProfiles: [{ id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' }],
        compactor: async ({ summarize }) => [{ role: 'user', content: await summarize('summarise') }],
      },
    );
    const chatA = h.runtime.session('telegram:a');
    const chatB = h.runtime.session('telegram:b');
    await chatA.send('a');
    await chatB.send('b');
    const endedA = chatA.waitForEnd({ timeoutMs: 600_000 });
    await h.clock.advance(200); // b's 429 cooled p1 for 30 s before a's stream overflows
    expect(await endedA).toMatchObject({ run: { status: 'failed', error: { code: 'provider_rate_limit' } } });
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p1', 'p1']);
    await h.close();
  });
});
