import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type Tool } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

const tool = (name: string, output: string): Tool =>
  defineTool({ name, description: name, input: z.object({}), execute: () => output });

/** A tool source as mcpTools makes one: the same array until the list changes. */
function mutableSource(initial: readonly Tool[]) {
  let tools = initial;
  return {
    source: { current: () => tools },
    set: (next: readonly Tool[]) => (tools = next),
  };
}

describe('createRuntime({ tools: [source] })', () => {
  it('reads a tool source again for each run, so a changed list reaches the next run', async () => {
    const { source, set } = mutableSource([tool('a', 'A')]);
    const h = createHarness(
      [
        { toolCalls: [{ name: 'a', args: {} }] },
        { text: 'one' },
        { toolCalls: [{ name: 'b', args: {} }] },
        { text: 'two' },
      ],
      { tools: [source, tool('fixed', 'F')] },
    );
    const chat = h.runtime.session('s:1');
    await chat.send('first');
    await chat.waitForEnd({ timeoutMs: 600_000 });
    set([tool('b', 'B')]);
    await chat.send('second');
    await chat.waitForEnd({ timeoutMs: 600_000 });
    expect(h.model.requests.map((request) => request.tools.map((spec) => spec.name))).toEqual([
      ['a', 'fixed'],
      ['a', 'fixed'],
      ['b', 'fixed'],
      ['b', 'fixed'],
    ]);
    expect(h.of('tool.succeeded').map((event) => event.output)).toEqual(['A', 'B']);
    await h.close();
  });

  it('keeps the last good list when a changed one clashes with another tool name', async () => {
    const { source, set } = mutableSource([tool('a', 'A')]);
    const h = createHarness([{ text: 'one' }, { text: 'two' }], { tools: [source, tool('fixed', 'F')] });
    const chat = h.runtime.session('s:1');
    set([tool('fixed', 'clash')]);
    await chat.send('first');
    await chat.waitForEnd({ timeoutMs: 600_000 });
    expect(h.model.requests[0]?.tools.map((spec) => spec.name)).toEqual(['a', 'fixed']);
    await h.close();
  });

  it('refuses an entry that is neither a tool nor a source with invalid_input', () => {
    expect(() => createHarness([], { tools: [{ current: 'nope' } as never] })).toThrow(/tool source/);
  });
});
