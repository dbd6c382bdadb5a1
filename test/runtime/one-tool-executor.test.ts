import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, RuntimeError } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

/** A tool that counts its calls and throws what `failure` returns for the first `failures` of each (execute, undo). */
function failing(
  name: string,
  failures: { execute: number; undo: number },
  failure: () => Error,
  retry?: { attempts: number; baseMs: number },
) {
  const counts = { execute: 0, undo: 0 };
  const tool = defineTool({
    name,
    description: 'Fails, then works',
    input: z.object({}),
    ...(retry === undefined ? {} : { retry }),
    execute: () => {
      counts.execute++;
      if (counts.execute <= failures.execute) throw failure();
      return 'ok';
    },
    undo: () => {
      counts.undo++;
      if (counts.undo <= failures.undo) throw failure();
    },
  });
  return { tool, counts };
}

describe('the one tool executor behind model tool calls, plan steps and undo', () => {
  it('never retries a model tool call that failed for good, and keeps its code when the tool has a retry', async () => {
    const lookup = failing(
      'lookup',
      { execute: 9, undo: 0 },
      () => new RuntimeError('invalid_input', 'no such order'),
      {
        attempts: 3,
        baseMs: 10,
      },
    );
    const h = createHarness([{ toolCalls: [{ name: 'lookup', args: {} }] }, { text: 'sorry' }], {
      tools: [lookup.tool],
    });
    const chat = h.runtime.session('web:1');
    await chat.send('find it');
    const ended = chat.waitForEnd({ timeoutMs: 60_000 });
    await h.clock.advance(1_000);
    expect(await ended).toMatchObject({ run: { status: 'completed' } });
    expect(lookup.counts.execute).toBe(1);
    expect(h.of('tool.failed')).toMatchObject([{ tool: 'lookup', error: { code: 'invalid_input' } }]);
    await h.close();
  });

  it('gives a plan step its tool’s own retry over the plan’s retries when the tool defines one', async () => {
    const flaky = failing('flaky', { execute: 9, undo: 0 }, () => new Error('upstream 503'), {
      attempts: 1,
      baseMs: 100,
    });
    const h = createHarness([], { tools: [flaky.tool] });
    const done = h.runtime
      .session('web:1')
      .executePlan({ steps: [{ id: 'f', tool: 'flaky', args: {} }] }, { retries: 3 });
    await h.clock.advance(10_000);
    const result = await done;
    expect(flaky.counts.execute).toBe(2);
    expect(result.results[0]).toMatchObject({
      success: false,
      error: { code: 'tool_failed' },
      metadata: { retries: 1 },
    });
    await h.close();
  });

  it('retries a compensation that failed transiently when its tool has a retry', async () => {
    const reserve = failing('reserve', { execute: 0, undo: 1 }, () => new Error('unused'), {
      attempts: 2,
      baseMs: 100,
    });
    const h = createHarness([], { tools: [reserve.tool] });
    const chat = h.runtime.session('web:1');
    const plan = await chat.executePlan({ steps: [{ id: 's1', tool: 'reserve', args: {} }] });
    expect(plan.status).toBe('completed');
    const undoing = chat.undo(plan.runId);
    await h.clock.advance(1_000);
    expect(await undoing).toMatchObject({ steps: [{ toolCallId: 's1', status: 'done' }] });
    expect(reserve.counts.undo).toBe(2);
    await h.close();
  });
});
