import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

describe('createRuntime globalLane rate', () => {
  it('makes the third model call only after the fake clock moved one interval when the rate is 2 per second', async () => {
    const h = createHarness(() => ({ text: 'ok' }), {
      globalLane: { rate: { limit: 2, intervalMs: 1000 } },
    });
    for (const key of ['s:1', 's:2', 's:3']) await h.runtime.session(key).send({ id: key, text: 'go' });
    await h.clock.advance(0);
    // The rate counts requests, not runs: the third run started and waits for its model call.
    expect(h.of('run.started').map((event) => event.sessionKey)).toEqual(['s:1', 's:2', 's:3']);
    expect(h.model.calls).toBe(2);
    await h.clock.advance(999);
    expect(h.model.calls).toBe(2);
    await h.clock.advance(1);
    expect(h.model.calls).toBe(3);
    expect(h.of('run.ended').map((event) => [event.sessionKey, event.status, event.at])).toEqual([
      ['s:1', 'completed', 0],
      ['s:2', 'completed', 0],
      ['s:3', 'completed', 1000],
    ]);
    await h.close();
  });

  it('takes one start of the rate per model call when one run makes several (tool turns)', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'echo',
      input: z.object({ n: z.number() }),
      execute: ({ n }) => Promise.resolve(String(n)),
    });
    let turn = 0;
    const h = createHarness(
      () => {
        turn += 1;
        return turn <= 3 ? { toolCalls: [{ name: 'echo', args: { n: turn } }] } : { text: 'done' };
      },
      { globalLane: { rate: { limit: 2, intervalMs: 1000 } }, tools: [echo] },
    );
    await h.runtime.session('s:1').send({ id: 'm1', text: 'go' });
    await h.clock.advance(0);
    // Four model calls in one run: two now, two a second later (a 25-turn run is 26 requests to a provider).
    expect(h.model.calls).toBe(2);
    await h.clock.advance(999);
    expect(h.model.calls).toBe(2);
    await h.clock.advance(1);
    expect(h.model.calls).toBe(4);
    expect(h.of('run.ended').map((event) => [event.status, event.at])).toEqual([['completed', 1000]]);
    await h.close();
  });
});
