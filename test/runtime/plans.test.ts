import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError, type RuntimeOptions } from 'agentlanes';
import type { FakeClock } from 'agentlanes/testing';
import { errorOf } from '../support/error-of.js';
import { createHarness } from '../support/runtime-harness.js';

/** Tools on the harness's fake clock: `wait` takes `ms`, `list` returns items, `flaky` fails `failures` times. */
function planTools(holder: { clock?: FakeClock }, log: string[]) {
  const sleep = (ms: number, signal?: AbortSignal) => holder.clock?.sleep(ms, signal) ?? Promise.resolve();
  let flakyCalls = 0;
  return [
    defineTool({
      name: 'wait',
      description: 'Wait, then echo a label',
      input: z.object({ label: z.string(), ms: z.number().default(100) }),
      execute: async ({ label, ms }, { signal }) => {
        log.push(`start ${label}@${holder.clock?.now() ?? 0}`);
        await sleep(ms, signal);
        return { label, at: holder.clock?.now() };
      },
    }),
    defineTool({
      name: 'list',
      description: 'List items',
      input: z.object({ count: z.number() }),
      execute: ({ count }) => ({
        items: Array.from({ length: count }, (_, index) => ({ id: `i${index}`, n: index })),
      }),
    }),
    defineTool({
      name: 'echo',
      description: 'Return the args',
      input: z.object({ value: z.unknown() }),
      execute: ({ value }) => ({ value }),
    }),
    defineTool({
      name: 'flaky',
      description: 'Fails twice, then works',
      input: z.object({}),
      execute: () => {
        log.push(`flaky@${holder.clock?.now() ?? 0}`);
        if (++flakyCalls <= 2) throw new Error('upstream 503');
        return 'ok';
      },
    }),
    defineTool({
      name: 'broken',
      description: 'Always fails',
      input: z.object({}),
      execute: () => {
        throw new Error('broken for good');
      },
    }),
    defineTool({
      name: 'send',
      description: 'Send money',
      risk: 'high',
      input: z.object({ to: z.string() }),
      execute: ({ to }) => {
        log.push(`send ${to}`);
        return { sent: to };
      },
    }),
  ];
}

function harness(options: Partial<RuntimeOptions> = {}) {
  const holder: { clock?: FakeClock } = {};
  const log: string[] = [];
  const h = createHarness([], { tools: planTools(holder, log), ...options });
  holder.clock = h.clock;
  return { h, log, chat: h.runtime.session('web:1') };
}

const wait = (id: string, ms = 100, dependsOn?: string[]) => ({
  id,
  tool: 'wait',
  args: { label: id, ms },
  ...(dependsOn === undefined ? {} : { dependsOn }),
});

describe('session.executePlan', () => {
  it('runs independent steps in parallel and dependent ones after their dependencies', async () => {
    const { h, chat } = harness();
    const done = chat.executePlan({ steps: [wait('a'), wait('b', 50), wait('c', 100, ['a', 'b'])] });
    await h.clock.advance(200);
    const result = await done;
    expect(result.status).toBe('completed');
    expect(
      result.results.map((step) => [step.stepId, step.metadata.startedAt, step.metadata.executionTime]),
    ).toEqual([
      ['a', 0, 100],
      ['b', 0, 50],
      ['c', 100, 100],
    ]);
    await h.close();
  });

  it('runs at most maxParallel steps at once', async () => {
    const { h, chat } = harness();
    const steps = ['a', 'b', 'c', 'd', 'e'].map((id) => wait(id));
    const done = chat.executePlan({ steps }, { maxParallel: 2 });
    await h.clock.advance(300);
    const result = await done;
    expect(result.results.map((step) => step.metadata.startedAt)).toEqual([0, 0, 100, 100, 200]);
    await h.close();
  });

  it('resolves every placeholder form, keeping types, and fails unresolved and invalid args', async () => {
    const { h, chat } = harness();
    const result = await chat.executePlan({
      steps: [
        { id: 'list', tool: 'list', args: { count: 3 } },
        { id: 'first', tool: 'echo', args: { value: '$list.items[0].id' } },
        { id: 'whole', tool: 'echo', args: { value: '${step[0].data.items[2].n}' } },
        { id: 'mapped', tool: 'echo', args: { value: '${step[0].data.items.*.id}' } },
        { id: 'text', tool: 'echo', args: { value: 'first is $list.items[0].id, costs $5' } },
        { id: 'nested', tool: 'echo', args: { value: { deep: ['$first.value'] } } },
        { id: 'missing', tool: 'echo', args: { value: '$list.items[7].id' } },
        { id: 'invalid', tool: 'wait', args: { label: '$list.items[0].n' } },
      ],
    });
    const byId = Object.fromEntries(result.results.map((step) => [step.stepId, step]));
    expect(byId['first']?.data).toEqual({ value: 'i0' });
    expect(byId['whole']?.data).toEqual({ value: 2 });
    expect(byId['mapped']?.data).toEqual({ value: ['i0', 'i1', 'i2'] });
    expect(byId['text']?.data).toEqual({ value: 'first is i0, costs $5' });
    expect(byId['nested']?.data).toEqual({ value: { deep: ['i0'] } });
    expect(byId['missing']).toMatchObject({ success: false, error: { code: 'args_unresolved' } });
    expect(byId['missing']?.error?.message).toContain('$list.items[7].id');
    expect(byId['invalid']).toMatchObject({ success: false, error: { code: 'args_invalid' } });
    expect(result.status).toBe('failed');
    await h.close();
  });

  it('expands a step per array item, fans dependents out over the children, and expands [] to nothing', async () => {
    const { h, chat } = harness();
    const result = await chat.executePlan({
      steps: [
        { id: 'list', tool: 'list', args: { count: 2 } },
        { id: 'each', tool: 'echo', args: { value: '$list.items[*].id' } },
        { id: 'again', tool: 'echo', args: { value: '$each.value' } },
        { id: 'none', tool: 'list', args: { count: 0 } },
        { id: 'zero', tool: 'echo', args: { value: '$none.items[*].id' } },
      ],
    });
    expect(result.status).toBe('completed');
    expect(result.results.map((step) => [step.stepId, step.data])).toEqual([
      [
        'list',
        {
          items: [
            { id: 'i0', n: 0 },
            { id: 'i1', n: 1 },
          ],
        },
      ],
      ['each-0', { value: 'i0' }],
      ['each-1', { value: 'i1' }],
      ['again-0', { value: 'i0' }],
      ['again-1', { value: 'i1' }],
      ['none', { items: [] }],
      ['zero', []],
    ]);
    await h.close();
  });

  it('refuses a cycle naming it, and a dangling dependency, before anything runs', async () => {
    const { h, chat, log } = harness();
    const cycle = await errorOf(
      chat.executePlan({ steps: [wait('a', 1, ['c']), wait('b', 1, ['a']), wait('c', 1, ['b']), wait('d')] }),
    );
    expect(isRuntimeError(cycle, 'plan_cycle')).toBe(true);
    expect((cycle as Error).message).toContain('a -> c -> b -> a');
    const dangling = await errorOf(chat.executePlan({ steps: [wait('a', 1, ['ghost'])] }));
    expect(isRuntimeError(dangling, 'invalid_input')).toBe(true);
    expect((dangling as Error).message).toContain('ghost');
    expect(log).toEqual([]);
    expect(await chat.runs()).toEqual([]);
    await h.close();
  });

  it('retries a transient failure with exponential backoff and jitter', async () => {
    const { h, chat, log } = harness();
    const done = chat.executePlan({ steps: [{ id: 'f', tool: 'flaky', args: {} }] }, { retryBaseMs: 500 });
    await h.clock.advance(1_000);
    const result = await done;
    // random 0.5: floor(0.5 × 500) = 250 ms, then floor(0.5 × 1000) = 500 ms.
    expect(log).toEqual(['flaky@0', 'flaky@250', 'flaky@750']);
    expect(result.results[0]).toMatchObject({
      success: true,
      data: 'ok',
      metadata: { retries: 2, startedAt: 0 },
    });
    await h.close();
  });

  it('fails a step that runs past timeoutMs with timeout, after its retries', async () => {
    const { h, chat, log } = harness();
    const done = chat.executePlan(
      { steps: [wait('slow', 1_000)] },
      { timeoutMs: 50, retries: 1, retryBaseMs: 100 },
    );
    await h.clock.advance(1_000);
    const result = await done;
    // Attempt 1 times out at 50 ms, waits floor(0.5 × 100) = 50 ms, attempt 2 times out at 150 ms.
    expect(log).toEqual(['start slow@0', 'start slow@100']);
    expect(result.results[0]).toMatchObject({
      success: false,
      error: { code: 'timeout' },
      metadata: { retries: 1, executionTime: 150 },
    });
    await h.close();
  });

  it('goes on past a failure without failFast, blocking only what depends on it', async () => {
    const { h, chat } = harness();
    const done = chat.executePlan(
      {
        steps: [
          { id: 'bad', tool: 'broken', args: {} },
          wait('ok'),
          { id: 'after', tool: 'echo', args: { value: '$bad' } },
        ],
      },
      { retries: 0 },
    );
    await h.clock.advance(100);
    const result = await done;
    expect(result.status).toBe('failed');
    expect(result.results.map((step) => [step.stepId, step.success, step.error?.code])).toEqual([
      ['bad', false, 'tool_failed'],
      ['ok', true, undefined],
      ['after', false, 'cancelled'],
    ]);
    expect(result.results[2]?.error?.message).toBe('dependency "bad" did not succeed');
    await h.close();
  });

  it('stops at the first failure with failFast, aborting running steps and cancelling the rest', async () => {
    const { h, chat } = harness();
    const done = chat.executePlan(
      { steps: [wait('slow', 500), { id: 'bad', tool: 'broken', args: {} }, wait('later', 100, ['slow'])] },
      { retries: 0, failFast: true },
    );
    await h.clock.advance(0);
    const result = await done;
    expect(result.status).toBe('failed');
    expect(result.results.map((step) => [step.stepId, step.error?.code])).toEqual([
      ['slow', 'cancelled'],
      ['bad', 'tool_failed'],
      ['later', 'cancelled'],
    ]);
    expect(h.clock.now()).toBe(0);
    await h.close();
  });

  it('previews without executing: resolvable args validated, placeholders left for later', async () => {
    const { h, chat, log } = harness();
    const result = await chat.executePlan(
      {
        steps: [
          { id: 'list', tool: 'list', args: { count: 2 } },
          { id: 'each', tool: 'echo', args: { value: '$list.items[*].id' } },
          { id: 'bad', tool: 'wait', args: { label: 7 } },
          { id: 'pay', tool: 'send', args: { to: 'bob' } },
          { id: 'nope', tool: 'teleport', args: {} },
        ],
      },
      { mode: 'preview' },
    );
    expect(result.status).toBe('preview');
    expect(log).toEqual([]);
    expect(result.results.map((step) => [step.stepId, step.success, step.error?.code])).toEqual([
      ['list', true, undefined],
      ['each', true, undefined],
      ['bad', false, 'args_invalid'],
      ['pay', true, undefined],
      ['nope', false, 'not_found'],
    ]);
    expect(result.results[1]?.data).toMatchObject({ resolved: false, dependsOn: ['list'] });
    expect(result.results[3]?.data).toMatchObject({ resolved: true, needsApproval: true });
    expect(h.of('tool.called')).toEqual([]);
    await h.close();
  });

  it('pauses at a high-risk step in auto mode, runs the rest, and resumes on approval', async () => {
    const { h, chat, log } = harness();
    const paused = await chat.executePlan({
      steps: [
        { id: 'list', tool: 'list', args: { count: 1 } },
        { id: 'pay', tool: 'send', args: { to: '$list.items[0].id' } },
        { id: 'note', tool: 'echo', args: { value: '$pay.sent' } },
        { id: 'other', tool: 'echo', args: { value: 1 } },
      ],
    });
    expect(paused).toMatchObject({ status: 'awaiting_approval', awaiting: ['pay'] });
    expect(paused.results.map((step) => step.stepId)).toEqual(['list', 'other']);
    await h.clock.advance(0);
    expect(h.of('approval.requested')).toMatchObject([{ toolCallId: 'pay', stepId: 'pay', tool: 'send' }]);
    expect((await chat.runs())[0]?.status).toBe('awaiting_approval');

    const resumed = await chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] });
    expect(resumed.status).toBe('completed');
    expect(resumed.results.map((step) => [step.stepId, step.data])).toEqual([
      ['list', { items: [{ id: 'i0', n: 0 }] }],
      ['pay', { sent: 'i0' }],
      ['note', { value: 'i0' }],
      ['other', { value: 1 }],
    ]);
    expect(log).toEqual(['send i0']);
    await h.clock.advance(0);
    expect(h.of('step.executed').map((event) => event.stepId)).toEqual(['list', 'other', 'pay', 'note']);
    const again = await errorOf(chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] }));
    expect(isRuntimeError(again, 'invalid_input')).toBe(true);
    await h.close();
  });

  it('pauses the whole plan in approval mode, and fails what the operator rejects', async () => {
    const { h, chat, log } = harness();
    const plan = { steps: [wait('a', 10), { id: 'pay', tool: 'send', args: { to: 'x' } }] };
    const paused = await chat.executePlan(plan, { mode: 'approval' });
    expect(paused).toMatchObject({ status: 'awaiting_approval', awaiting: ['a', 'pay'], results: [] });
    expect(log).toEqual([]);
    const done = chat.approvePlan({ runId: paused.runId, stepIds: ['a'], reject: ['pay'] });
    await h.clock.advance(10);
    const result = await done;
    expect(result.status).toBe('failed');
    expect(result.results.map((step) => [step.stepId, step.success])).toEqual([
      ['a', true],
      ['pay', false],
    ]);
    expect(log).toEqual(['start a@0']);
    expect(h.of('approval.resolved').map((event) => [event.toolCallId, event.decision])).toEqual([
      ['a', 'approve'],
      ['pay', 'reject'],
    ]);
    await h.close();
  });

  it('refuses approvals for unknown runs, unknown steps and bad input', async () => {
    const { h, chat } = harness();
    const paused = await chat.executePlan({ steps: [{ id: 'pay', tool: 'send', args: { to: 'x' } }] });
    const other = h.runtime.session('web:2');
    expect(
      isRuntimeError(
        await errorOf(other.approvePlan({ runId: paused.runId, stepIds: ['pay'] })),
        'not_found',
      ),
    ).toBe(true);
    expect(
      isRuntimeError(
        await errorOf(chat.approvePlan({ runId: paused.runId, stepIds: ['ghost'] })),
        'invalid_input',
      ),
    ).toBe(true);
    expect(
      isRuntimeError(await errorOf(chat.approvePlan({ runId: paused.runId, stepIds: [] })), 'invalid_input'),
    ).toBe(true);
    expect(
      isRuntimeError(
        await errorOf(chat.approvePlan({ runId: paused.runId, stepIds: ['pay'], reject: ['pay'] })),
        'invalid_input',
      ),
    ).toBe(true);
    expect(isRuntimeError(await errorOf(chat.executePlan({ steps: [] })), 'invalid_input')).toBe(true);
    expect(
      isRuntimeError(
        await errorOf(chat.executePlan({ steps: [wait('a')] }, { maxParallel: 0 })),
        'invalid_input',
      ),
    ).toBe(true);
    expect(h.of('approval.resolved')).toEqual([]);
    await h.close();
  });

  it('stops on abort: running steps get the signal, pending ones are cancelled', async () => {
    const { h, chat } = harness();
    const done = chat.executePlan({ steps: [wait('a', 1_000), wait('b', 10, ['a'])] });
    await h.clock.advance(100);
    expect(chat.status()).toMatchObject({ state: 'running' });
    expect(await chat.abort({ reason: 'user sent /stop' })).toBe(true);
    const result = await done;
    expect(result.status).toBe('aborted');
    expect(result.results.map((step) => [step.stepId, step.error?.code])).toEqual([
      ['a', 'cancelled'],
      ['b', 'cancelled'],
    ]);
    expect(h.of('run.ended')).toMatchObject([{ status: 'aborted' }]);
    await h.close();
  });

  it('is given close() timeoutMs to finish, then aborted, before the ledger closes', async () => {
    const { h, chat } = harness();
    const done = chat.executePlan({ steps: [wait('long', 60_000)] });
    await h.clock.advance(10);
    const closing = h.runtime.close({ timeoutMs: 1_000 });
    await h.clock.advance(1_000);
    await closing;
    expect(await done).toMatchObject({ status: 'aborted', results: [{ stepId: 'long', success: false }] });
    expect(h.clock.now()).toBe(1_010);
    await h.close();
  });

  it('shows each step its resolved inputs as a markdown table before it runs, and records the run', async () => {
    const { h, chat } = harness();
    const result = await chat.executePlan({ steps: [{ id: 'e', tool: 'echo', args: { value: 'a|b' } }] });
    await h.clock.advance(0);
    const types = h.events.filter((event) => event.runId === result.runId).map((event) => event.type);
    expect(types).toEqual([
      'run.started',
      'assistant.delta',
      'tool.called',
      'tool.succeeded',
      'step.executed',
      'run.ended',
    ]);
    expect(h.of('assistant.delta')[0]?.delta).toBe(
      '**e** `echo`\n\n| input | value |\n| --- | --- |\n| value | a\\|b |\n',
    );
    expect(await chat.runs()).toMatchObject([
      { runId: result.runId, status: 'completed', text: 'plan: 1 of 1 steps succeeded' },
    ]);
    await h.close();
  });
});
