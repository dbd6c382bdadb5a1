import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

async function run(h: ReturnType<typeof createHarness>, advance = 0) {
  const chat = h.runtime.session('telegram:1');
  await chat.send('go');
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(advance);
  return ended;
}

describe('defineTool({ retry })', () => {
  it('retries a failing call with full-jitter backoff on the injected clock, then succeeds', async () => {
    const attempts: number[] = [];
    let clockNow = (): number => 0;
    const flaky = defineTool({
      name: 'flaky',
      description: 'fails twice',
      input: z.object({}),
      retry: { attempts: 2, baseMs: 200 },
      execute: () => {
        attempts.push(clockNow());
        if (attempts.length < 3) throw new Error('upstream hiccup');
        return 'finally';
      },
    });
    const h = createHarness([{ toolCalls: [{ name: 'flaky', args: {} }] }, { text: 'ok' }], {
      tools: [flaky],
    });
    clockNow = () => h.clock.now();
    expect(await run(h, 1_000)).toMatchObject({ run: { status: 'completed' } });
    // random 0.5: floor(0.5 × 200) = 100 ms, then floor(0.5 × 400) = 200 ms.
    expect(attempts).toEqual([0, 100, 300]);
    expect(h.of('tool.succeeded')).toMatchObject([{ tool: 'flaky', output: 'finally', durationMs: 300 }]);
    expect(h.of('tool.failed')).toEqual([]);
    await h.close();
  });

  it('feeds the last failure back to the model once the retries are spent', async () => {
    let calls = 0;
    const broken = defineTool({
      name: 'broken',
      description: 'always fails',
      input: z.object({}),
      retry: { attempts: 1, baseMs: 10 },
      execute: () => {
        calls++;
        throw new Error('still down');
      },
    });
    const h = createHarness([{ toolCalls: [{ name: 'broken', args: {} }] }, { text: 'sorry' }], {
      tools: [broken],
    });
    expect(await run(h, 1_000)).toMatchObject({ run: { status: 'completed', text: 'sorry' } });
    expect(calls).toBe(2);
    expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'Error: still down',
      isError: true,
    });
    await h.close();
  });

  it('refuses a retry setting out of range with invalid_input', () => {
    let error: unknown;
    try {
      defineTool({ name: 'x', description: 'x', input: z.object({}), retry: { attempts: 99 } });
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
  });
});

describe('defineTool({ output })', () => {
  it('fails the call when the output does not match the schema, and passes it on when it does', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'looks up',
      input: z.object({ good: z.boolean() }),
      output: z.object({ status: z.string() }),
      execute: ({ good }) => (good ? { status: 'shipped' } : { state: 'what' }),
    });
    const h = createHarness(
      [
        {
          toolCalls: [
            { id: 'bad', name: 'lookup', args: { good: false } },
            { id: 'good', name: 'lookup', args: { good: true } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [lookup] },
    );
    await run(h);
    expect(h.of('tool.failed')).toMatchObject([{ toolCallId: 'bad', error: { code: 'tool_failed' } }]);
    expect(h.of('tool.succeeded')).toMatchObject([{ toolCallId: 'good', output: { status: 'shipped' } }]);
    await h.close();
  });
});
