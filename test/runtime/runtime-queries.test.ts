import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from 'agentlanes';
import { z } from 'zod';
import { createHarness, type Harness } from '../support/runtime-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('Runtime.sessions', () => {
  it('pages stored and live sessions by key, with their status', async () => {
    harness = createHarness([{ text: 'a' }, { hang: true }]);
    await harness.runtime.session('b:1').send('hi');
    await harness.runtime.session('b:1').waitForEnd();
    await harness.runtime.session('a:1').send('hang');
    await harness.settled();
    const first = await harness.runtime.sessions({ limit: 1 });
    expect(first).toEqual({
      sessions: [{ key: 'a:1', state: 'streaming', runId: expect.any(String) as string, queued: 0 }],
      next: 'a:1',
    });
    const rest = await harness.runtime.sessions({ after: 'a:1' });
    expect(rest.sessions.map((session) => [session.key, session.state])).toEqual([['b:1', 'idle']]);
    expect(rest.next).toBeUndefined();
    await expect(harness.runtime.sessions({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(harness.runtime.sessions({ colour: 'red' } as never)).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await harness.runtime.session('a:1').abort();
  });
});

describe('Runtime.pendingCalls', () => {
  it('lists the calls waiting for an approval or a deferred result across sessions, and none once settled', async () => {
    const refund = defineTool({
      name: 'refund',
      description: 'Refund',
      risk: 'high',
      input: z.object({ orderId: z.string() }),
      execute: () => Promise.resolve('ok'),
    });
    const ask = defineTool({ name: 'ask', description: 'Ask a human', input: z.object({ q: z.string() }) });
    harness = createHarness(
      (request) =>
        request.messages.some((message) => message.role === 'tool')
          ? { text: 'done' }
          : request.messages.some((message) => JSON.stringify(message).includes('refund'))
            ? { toolCalls: [{ id: 'c-1', name: 'refund', args: { orderId: 'o-1' } }] }
            : { toolCalls: [{ id: 'c-2', name: 'ask', args: { q: 'size?' } }] },
      { tools: [refund, ask] },
    );
    await harness.runtime.session('s:1').send('refund please');
    await harness.runtime.session('s:2').send('a question');
    await harness.runtime.session('s:1').waitForEnd();
    await harness.runtime.session('s:2').waitForEnd();
    const pending = await harness.runtime.pendingCalls();
    expect(
      pending.map(({ sessionKey, toolCallId, tool, kind, args }) => ({
        sessionKey,
        toolCallId,
        tool,
        kind,
        args,
      })),
    ).toEqual(
      expect.arrayContaining([
        { sessionKey: 's:1', toolCallId: 'c-1', tool: 'refund', kind: 'approval', args: { orderId: 'o-1' } },
        { sessionKey: 's:2', toolCallId: 'c-2', tool: 'ask', kind: 'deferred', args: { q: 'size?' } },
      ]),
    );
    expect(pending).toHaveLength(2);
    await harness.runtime.session('s:1').approve({ toolCallId: 'c-1', decision: 'approve' });
    await harness.runtime.session('s:2').supplyToolResult({ toolCallId: 'c-2', output: 'M' });
    await harness.runtime.session('s:1').waitForEnd();
    await harness.runtime.session('s:2').waitForEnd();
    expect(await harness.runtime.pendingCalls()).toEqual([]);
  });
});

describe('Runtime.eventCursor', () => {
  it('is the cursor after which a stream sees every event an action causes', async () => {
    harness = createHarness([{ text: 'one' }, { text: 'two' }]);
    const session = harness.runtime.session('s:1');
    await session.send('warm up');
    await harness.runtime.session('s:1').waitForEnd();
    // The harness's own stream reads what the ledger made durable (a step behind on Postgres): let it catch up.
    await harness.settled();
    const from = harness.runtime.eventCursor();
    expect(from).toBe(harness.events.at(-1)?.cursor);
    const controller = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of session.events({ after: from, signal: controller.signal })) {
        seen.push(event.type);
        if (event.type === 'run.ended') controller.abort();
      }
    })();
    await session.send('again');
    await reading;
    expect(seen[0]).toBe('message.received');
    expect(seen.at(-1)).toBe('run.ended');
  });
});
