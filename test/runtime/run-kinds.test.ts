import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'agentlanes';
import type { FakeClock, ScriptEntry } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

/**
 * `reserve` (its undo waits for `releaseUndo` when `holdUndo` is set) and `wait` (takes `ms` on the fake clock),
 * each logging what it does, in order.
 */
function tools(holder: { clock?: FakeClock }) {
  const log: string[] = [];
  let releaseUndo: (() => void) | undefined;
  const state = { holdUndo: false };
  const reserve = defineTool({
    name: 'reserve',
    description: 'Reserve an item',
    input: z.object({ item: z.string() }),
    execute: ({ item }) => {
      log.push(`reserve ${item}`);
      return { reservation: `res-${item}` };
    },
    undo: async ({ item }) => {
      log.push(`undo ${item} started`);
      if (state.holdUndo) await new Promise<void>((resolve) => (releaseUndo = resolve));
      log.push(`undo ${item} done`);
    },
  });
  const wait = defineTool({
    name: 'wait',
    description: 'Wait a while',
    input: z.object({ ms: z.number() }),
    execute: async ({ ms }, { signal }) => {
      log.push(`wait ${ms} started`);
      await holder.clock?.sleep(ms, signal);
      log.push(`wait ${ms} done`);
      return 'waited';
    },
  });
  return { tools: [reserve, wait], log, state, release: () => releaseUndo?.() };
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args });
const now = { mode: 'followup', debounceMs: 0 } as const;

/** A harness whose first run reserved a shirt (one compensation to undo); resolves that run's id. */
async function afterReservation(script: readonly ScriptEntry[]) {
  const holder: { clock?: FakeClock } = {};
  const kit = tools(holder);
  const h = createHarness(
    [{ toolCalls: [call('c1', 'reserve', { item: 'shirt' })] }, { text: 'reserved' }, ...script],
    { tools: kit.tools, limits: { parallelToolCalls: 1 } },
  );
  holder.clock = h.clock;
  const chat = h.runtime.session('web:1');
  await chat.send('reserve');
  const ended = await chat.waitForEnd();
  const runId = ended.status === 'ended' ? ended.run.runId : '';
  return { h, chat, kit, runId };
}

describe('session.undo as a run of the session machine', () => {
  it('starts only after the active agent run ended: the run ends its 1,000 ms tool call first', async () => {
    const { h, chat, kit, runId } = await afterReservation([
      { toolCalls: [call('w1', 'wait', { ms: 1_000 })] },
      { text: 'waited' },
    ]);
    const sent = await chat.send('wait a second', now);
    expect(sent.disposition).toBe('started');
    await h.clock.advance(0);
    expect(kit.log).toEqual(['reserve shirt', 'wait 1000 started']);

    const undoing = chat.undo(runId);
    await h.clock.advance(500);
    // Half way through the run's tool call, the undo has not started and the session still names the run.
    expect(kit.log).toEqual(['reserve shirt', 'wait 1000 started']);
    expect(chat.status()).toMatchObject({ state: 'running', runId: sent.runId });

    await h.clock.advance(500);
    expect(await undoing).toEqual({
      runId,
      steps: [{ seq: 1, toolCallId: 'c1', tool: 'reserve', status: 'done' }],
    });
    expect(kit.log).toEqual([
      'reserve shirt',
      'wait 1000 started',
      'wait 1000 done',
      'undo shirt started',
      'undo shirt done',
    ]);
    await h.close();
  });

  it('queues a message that arrives while it runs, and runs that message once it is done', async () => {
    const { h, chat, kit, runId } = await afterReservation([{ text: 'after the undo' }]);
    kit.state.holdUndo = true;
    const undoing = chat.undo(runId);
    await h.clock.advance(0);
    expect(kit.log).toEqual(['reserve shirt', 'undo shirt started']);
    expect(chat.status()).toMatchObject({ state: 'running', queued: 0 });

    const sent = await chat.send('hello again', now);
    expect(sent).toMatchObject({ disposition: 'queued', position: 1 });
    await h.clock.advance(1_000);
    // The message waits for the undo: the model was called twice (the first run) and not a third time.
    expect(h.model.requests).toHaveLength(2);
    expect(chat.status()).toMatchObject({ state: 'running', queued: 1 });

    kit.release();
    await undoing;
    await h.clock.advance(0);
    const ended = await chat.waitForEnd();
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'after the undo' } });
    expect(h.model.requests).toHaveLength(3);
    expect(kit.log).toEqual(['reserve shirt', 'undo shirt started', 'undo shirt done']);
    await h.close();
  });

  it('is aborted by an interrupting message, which then runs', async () => {
    const { h, chat, kit, runId } = await afterReservation([{ text: 'interrupted you' }]);
    kit.state.holdUndo = true;
    const undoing = chat.undo(runId);
    await h.clock.advance(0);
    const sent = await chat.send('stop that', { mode: 'interrupt' });
    expect(sent.disposition).toBe('interrupted');
    // The undo's tool ignores its signal; the undo stops waiting for it and reports it in doubt.
    expect(await undoing).toMatchObject({ steps: [{ toolCallId: 'c1', status: 'in_doubt' }] });
    await h.clock.advance(0);
    const ended = await chat.waitForEnd();
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'interrupted you' } });
    await h.close();
  });
});

describe('session.executePlan as a run of the session machine', () => {
  it('waits behind an active agent run: its first step starts after the run ends its 1,000 ms tool call', async () => {
    const { h, chat, kit } = await afterReservation([
      { toolCalls: [call('w1', 'wait', { ms: 1_000 })] },
      { text: 'waited' },
    ]);
    await chat.send('wait a second', now);
    await h.clock.advance(0);
    const planning = chat.executePlan({ steps: [{ id: 'hat', tool: 'reserve', args: { item: 'hat' } }] });
    await h.clock.advance(999);
    expect(kit.log).toEqual(['reserve shirt', 'wait 1000 started']);
    await h.clock.advance(1);
    expect(await planning).toMatchObject({
      status: 'completed',
      results: [{ stepId: 'hat', success: true }],
    });
    expect(kit.log).toEqual(['reserve shirt', 'wait 1000 started', 'wait 1000 done', 'reserve hat']);
    await h.close();
  });

  it('waits behind an agent run that still waits for the global lane, and never runs beside it', async () => {
    const holder: { clock?: FakeClock } = {};
    const kit = tools(holder);
    const h = createHarness(
      [{ toolCalls: [call('w1', 'wait', { ms: 1_000 })] }, { text: 'other done' }, { text: 'mine done' }],
      { tools: kit.tools, globalLane: { concurrency: 1 } },
    );
    holder.clock = h.clock;
    // Another session holds the only global slot for 1,000 ms.
    await h.runtime.session('web:other').send('wait a second', now);
    await h.clock.advance(0);
    const chat = h.runtime.session('web:1');
    expect(await chat.send({ text: 'mine', id: 'm1' }, { mode: 'steer' })).toMatchObject({
      disposition: 'started',
    });
    const planning = chat.executePlan({ steps: [{ id: 'hat', tool: 'reserve', args: { item: 'hat' } }] });
    await h.clock.advance(500);
    expect(kit.log).toEqual(['wait 1000 started']);
    await h.clock.advance(500);
    expect(await planning).toMatchObject({ status: 'completed' });
    const web1 = h.events.filter(
      (event) => event.sessionKey === 'web:1' && /^run\.(started|ended)$/.test(event.type),
    );
    const [first, second] = [web1[0]?.runId, web1[2]?.runId];
    expect(web1.map((event) => [event.type, event.runId])).toEqual([
      ['run.started', first],
      ['run.ended', first],
      ['run.started', second],
      ['run.ended', second],
    ]);
    expect(first).not.toBe(second);
    await h.close();
  });

  it('is aborted through the session machine by abort(): the step in flight gets the signal', async () => {
    const { h, chat, kit } = await afterReservation([]);
    const planning = chat.executePlan({ steps: [{ id: 'long', tool: 'wait', args: { ms: 60_000 } }] });
    await h.clock.advance(100);
    expect(chat.status()).toMatchObject({ state: 'running' });
    expect(await chat.abort({ reason: 'enough' })).toBe(true);
    expect(await planning).toMatchObject({ status: 'aborted' });
    await h.clock.advance(0);
    expect(kit.log).toEqual(['reserve shirt', 'wait 60000 started']);
    expect(h.of('run.ended').at(-1)).toMatchObject({ status: 'aborted' });
    expect(chat.status()).toMatchObject({ state: 'idle', queued: 0 });
    await h.close();
  });
});

describe('a paused plan as the paused run of the session machine', () => {
  it('waits past 5 pause timeouts, names the plan in status(), and refuses approve() and undo() until approvePlan', async () => {
    const holder: { clock?: FakeClock } = {};
    const kit = tools(holder);
    const h = createHarness(
      [{ toolCalls: [call('c1', 'reserve', { item: 'shirt' })] }, { text: 'reserved' }],
      {
        tools: kit.tools,
        limits: { pauseTimeoutMs: 1_000 },
      },
    );
    holder.clock = h.clock;
    const chat = h.runtime.session('web:1');
    await chat.send('reserve');
    const first = await chat.waitForEnd();
    const runId = first.status === 'ended' ? first.run.runId : '';
    const plan = { steps: [{ id: 'hat', tool: 'reserve', args: { item: 'hat' } }] };
    const paused = await chat.executePlan(plan, { mode: 'approval' });
    expect(paused).toMatchObject({ status: 'awaiting_approval', awaiting: ['hat'] });
    await h.clock.advance(5_000);
    expect(chat.status()).toEqual({ state: 'awaiting_approval', runId: paused.runId, queued: 0 });
    expect(await chat.waitForEnd()).toMatchObject({
      status: 'paused',
      runId: paused.runId,
      waiting: [{ toolCallId: 'hat', tool: 'reserve', needs: 'approval' }],
    });
    await expect(chat.approve({ toolCallId: 'hat', decision: 'approve' })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(chat.undo(runId)).rejects.toMatchObject({ code: 'rejected_busy' });
    expect(kit.log).toEqual(['reserve shirt']);

    const done = await chat.approvePlan({ runId: paused.runId, stepIds: ['hat'] });
    expect(done).toMatchObject({ status: 'completed', results: [{ stepId: 'hat', success: true }] });
    await h.clock.advance(0);
    expect(chat.status()).toEqual({ state: 'idle', queued: 0 });
    expect(kit.log).toEqual(['reserve shirt', 'reserve hat']);
    expect(await chat.undo(runId)).toMatchObject({ steps: [{ toolCallId: 'c1', status: 'done' }] });
    await h.close();
  });
});
