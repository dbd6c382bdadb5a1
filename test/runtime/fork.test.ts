import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError } from 'agentlanes';
import { createDeferred } from '../../src/core/deferred.js';
import { createHarness } from '../support/runtime-harness.js';

/** The code a rejected promise carries (undefined when it resolved or threw something else). */
async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return isRuntimeError(error) ? error.code : undefined;
}

describe('runtime.fork', () => {
  it("hands the parent's conversation to the child's first model request and leaves the parent on its own", async () => {
    const h = createHarness([{ text: 'hello' }, { text: 'child answer' }, { text: 'parent answer' }]);
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'hi' });
    await parent.waitForEnd({ timeoutMs: 1000 });
    const fork = await h.runtime.fork('chat:p', 'chat:c');
    expect(fork).toMatchObject({ sessionKey: 'chat:c', parentKey: 'chat:p', turns: 2, upToRunId: 'run_1' });
    const child = h.runtime.session('chat:c');
    await child.send({ id: 'b', text: 'and then?' });
    await child.waitForEnd({ timeoutMs: 1000 });
    await parent.send({ id: 'c', text: 'again' });
    await parent.waitForEnd({ timeoutMs: 1000 });
    expect(h.model.requests[1]?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'and then?' },
    ]);
    expect(h.model.requests[2]?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'again' },
    ]);
    const childTurns = await child.transcript();
    expect(childTurns.map((turn) => [turn.sessionKey, turn.content])).toEqual([
      ['chat:p', 'hi'],
      ['chat:p', 'hello'],
      ['chat:c', 'and then?'],
      ['chat:c', 'child answer'],
    ]);
    expect((await parent.transcript()).map((turn) => turn.content)).toEqual([
      'hi',
      'hello',
      'again',
      'parent answer',
    ]);
    await h.close();
  });

  it('takes the last committed state of a parent that is mid-run', async () => {
    const gate = createDeferred<string>();
    const started = createDeferred<void>();
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      input: z.object({}),
      execute: async () => {
        started.resolve();
        return gate.promise;
      },
    });
    const script = [
      { text: 'first' },
      { toolCalls: [{ id: 'k1', name: 'slow', args: {} }] },
      { text: 'done' },
    ];
    const h = createHarness(script, { tools: [slow] });
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'one' });
    await parent.waitForEnd({ timeoutMs: 1000 });
    await parent.send({ id: 'b', text: 'two' });
    await started.promise;
    expect((await parent.transcript()).length).toBeGreaterThan(2);
    const fork = await h.runtime.fork('chat:p', 'chat:c');
    expect(fork).toMatchObject({ turns: 2, upToRunId: 'run_1' });
    gate.resolve('ok');
    await parent.waitForEnd({ timeoutMs: 1000 });
    expect((await h.runtime.session('chat:c').transcript()).map((turn) => turn.content)).toEqual([
      'one',
      'first',
    ]);
    await h.close();
  });

  it('refuses an unknown parent, a child in use and a bad run id, writing nothing', async () => {
    const h = createHarness([{ text: 'hello' }, { text: 'other' }]);
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'hi' });
    await parent.waitForEnd({ timeoutMs: 1000 });
    await h.runtime.session('chat:used').send({ id: 'x', text: 'mine' });
    await h.runtime.session('chat:used').waitForEnd({ timeoutMs: 1000 });
    expect(await codeOf(h.runtime.fork('chat:nobody', 'chat:c'))).toBe('not_found');
    expect(await codeOf(h.runtime.fork('chat:p', 'chat:used'))).toBe('invalid_input');
    expect(await codeOf(h.runtime.fork('chat:p', 'chat:p'))).toBe('invalid_input');
    expect(await codeOf(h.runtime.fork('chat:p', 'chat:c', { upToRunId: 'run_9' }))).toBe('invalid_input');
    expect(await h.runtime.session('chat:c').transcript()).toEqual([]);
    expect((await h.runtime.session('chat:used').transcript()).map((turn) => turn.content)).toEqual([
      'mine',
      'other',
    ]);
    await h.runtime.fork('chat:p', 'chat:c', { upToRunId: 'run_1' });
    expect(await codeOf(h.runtime.fork('chat:p', 'chat:c'))).toBe('invalid_input');
    await h.close();
  });
});
