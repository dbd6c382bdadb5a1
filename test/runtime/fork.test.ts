import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, createSqliteLedger, defineTool, isRuntimeError, sequentialIds } from 'agentlanes';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { createHarness } from '../support/runtime-harness.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

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

  it('stores a fork of a 10,000-turn transcript as one row, and a restart keeps both sessions', async () => {
    const path = tempLedgerPath('fork');
    const seeded = createSqliteLedger({ path });
    const usage = { inputTokens: 0, outputTokens: 0 };
    await seeded.openRun({
      runId: 'old',
      sessionKey: 'chat:p',
      status: 'running',
      messageIds: [],
      provider: 'scripted',
      model: 'm',
      startedAt: 0,
      usage,
      text: '',
    });
    const turns = Array.from({ length: 10_000 }, (_, index) => ({
      sessionKey: 'chat:p',
      runId: 'old',
      index,
      role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `t${index}`,
      at: index,
    }));
    await seeded.appendTurns(turns);
    await seeded.closeRun('old', { status: 'completed', endedAt: 1, text: '', usage });
    await seeded.close();
    const count = (table: string): number => {
      const raw = new Database(path, { readonly: true });
      const row = raw.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
      raw.close();
      return row.n;
    };
    const open = () => {
      const clock = fakeClock({ now: 10 });
      const model = scriptedModel([{ text: 'child says' }], { clock });
      const ids = sequentialIds();
      const runtime = createRuntime({
        ledger: { path },
        providers: { scripted: model },
        model: { provider: 'scripted', model: 'm' },
        clock,
        ids,
        limits: { historyTurns: 4 },
      });
      return { runtime, model };
    };
    const first = open();
    expect(await first.runtime.fork('chat:p', 'chat:c')).toMatchObject({ turns: 10_000, upToRunId: 'old' });
    await first.runtime.session('chat:c').send({ id: 'm1', text: 'go on' });
    await first.runtime.session('chat:c').waitForEnd({ timeoutMs: 1000 });
    expect(first.model.requests[0]?.messages.map((message) => message.content)).toEqual([
      't9996',
      't9997',
      't9998',
      't9999',
      'go on',
    ]);
    await first.runtime.close();
    expect(count('turns')).toBe(10_002);
    expect(count('session_forks')).toBe(1);
    const second = open();
    const child = await second.runtime.session('chat:c').transcript();
    expect(child).toHaveLength(10_002);
    expect(child.slice(-3).map((turn) => turn.content)).toEqual(['t9999', 'go on', 'child says']);
    expect(await second.runtime.session('chat:p').transcript()).toHaveLength(10_000);
    await second.runtime.close();
  });
});
