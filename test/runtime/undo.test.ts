import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, isRuntimeError } from 'agentlanes';
import { errorOf } from '../support/error-of.js';
import { createHarness } from '../support/runtime-harness.js';

/** A tiny inventory whose `reserve` tool can be undone, and whose undo can be told to fail. */
function inventory() {
  const reserved: string[] = [];
  const undone: string[] = [];
  let failUndoOf: string | undefined;
  const reserve = defineTool({
    name: 'reserve',
    description: 'Reserve an item',
    input: z.object({ item: z.string() }),
    execute: ({ item }) => {
      reserved.push(item);
      return { reservation: `res-${item}` };
    },
    undo: ({ item }, output) => {
      if (item === failUndoOf) throw new Error(`warehouse refused to release ${item}`);
      undone.push(`${item}:${output.reservation}`);
    },
  });
  return { reserve, reserved, undone, failUndo: (item: string | undefined) => (failUndoOf = item) };
}

const reserveCall = (id: string, item: string) => ({ id, name: 'reserve', args: { item } });

describe('session.undo', () => {
  it('runs the compensations of a run in reverse order and records each', async () => {
    const shop = inventory();
    const h = createHarness(
      [
        { toolCalls: [reserveCall('c1', 'shirt')] },
        { toolCalls: [reserveCall('c2', 'shoes'), reserveCall('c3', 'hat')] },
        { text: 'reserved' },
      ],
      { tools: [shop.reserve], limits: { parallelToolCalls: 1 } },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('reserve my outfit');
    const ended = await chat.waitForEnd();
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    const runId = ended.status === 'ended' ? ended.run.runId : '';
    expect(h.of('undo.enqueued').map((event) => [event.index, event.toolCallId])).toEqual([
      [1, 'c1'],
      [2, 'c2'],
      [3, 'c3'],
    ]);

    const result = await chat.undo(runId);
    expect(shop.undone).toEqual(['hat:res-hat', 'shoes:res-shoes', 'shirt:res-shirt']);
    expect(result).toEqual({
      runId,
      steps: [
        { seq: 3, toolCallId: 'c3', tool: 'reserve', status: 'done' },
        { seq: 2, toolCallId: 'c2', tool: 'reserve', status: 'done' },
        { seq: 1, toolCallId: 'c1', tool: 'reserve', status: 'done' },
      ],
    });
    await h.clock.advance(0);
    expect(h.of('undo.executed').map((event) => event.toolCallId)).toEqual(['c3', 'c2', 'c1']);
    // Done compensations never run twice.
    expect(await chat.undo(runId)).toEqual({ runId, steps: [] });
    expect(shop.undone).toHaveLength(3);
    await h.close();
  });

  it('records a failed compensation, runs the others, and retries it on the next undo', async () => {
    const shop = inventory();
    const h = createHarness(
      [{ toolCalls: [reserveCall('c1', 'shirt'), reserveCall('c2', 'shoes')] }, { text: 'ok' }],
      { tools: [shop.reserve] },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('reserve');
    const ended = await chat.waitForEnd();
    const runId = ended.status === 'ended' ? ended.run.runId : '';
    shop.failUndo('shoes');
    const first = await chat.undo(runId);
    expect(first.steps).toMatchObject([
      {
        toolCallId: 'c2',
        status: 'failed',
        error: { code: 'tool_failed', message: 'warehouse refused to release shoes' },
      },
      { toolCallId: 'c1', status: 'done' },
    ]);
    expect(h.of('undo.failed')).toMatchObject([{ toolCallId: 'c2', index: 2 }]);
    shop.failUndo(undefined);
    const second = await chat.undo(runId);
    expect(second.steps).toMatchObject([{ toolCallId: 'c2', status: 'done' }]);
    expect(shop.undone).toEqual(['shirt:res-shirt', 'shoes:res-shoes']);
    await h.close();
  });

  it('refuses unknown runs, runs of another session and bad ids', async () => {
    const shop = inventory();
    const h = createHarness([{ text: 'hi' }], { tools: [shop.reserve] });
    const chat = h.runtime.session('web:1');
    await chat.send('hi');
    const ended = await chat.waitForEnd();
    const runId = ended.status === 'ended' ? ended.run.runId : '';
    expect(isRuntimeError(await errorOf(chat.undo('run-404')), 'not_found')).toBe(true);
    expect(isRuntimeError(await errorOf(h.runtime.session('web:2').undo(runId)), 'not_found')).toBe(true);
    expect(isRuntimeError(await errorOf(chat.undo(42 as never)), 'invalid_input')).toBe(true);
    expect(await chat.undo(runId)).toEqual({ runId, steps: [] });
    await h.close();
  });

  it('refuses to undo a run that has not ended', async () => {
    const h = createHarness([{ text: 'slow', tokenDelayMs: 1_000 }]);
    const chat = h.runtime.session('web:1');
    const sent = await chat.send('hi');
    const error = await errorOf(chat.undo(sent.runId ?? ''));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    await h.close();
  });

  it('refuses undo without execute at definition time', () => {
    let error: unknown;
    try {
      defineTool({ name: 'x', description: 'x', input: z.object({}), undo: () => undefined });
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
  });

  it('undoes the steps of a plan run in reverse order, as for agent runs', async () => {
    const shop = inventory();
    const h = createHarness([], { tools: [shop.reserve] });
    const chat = h.runtime.session('web:1');
    const plan = await chat.executePlan(
      {
        steps: [
          { id: 's1', tool: 'reserve', args: { item: 'shirt' } },
          { id: 's2', tool: 'reserve', args: { item: 'shoes' }, dependsOn: ['s1'] },
        ],
      },
      { maxParallel: 1 },
    );
    expect(plan.status).toBe('completed');
    const result = await chat.undo(plan.runId);
    expect(result.steps.map((step) => [step.toolCallId, step.status])).toEqual([
      ['s2', 'done'],
      ['s1', 'done'],
    ]);
    expect(shop.undone).toEqual(['shoes:res-shoes', 'shirt:res-shirt']);
    await h.close();
  });
});

describe('runtime.close and session.abort with an undo in progress', () => {
  /** A `reserve` tool whose undo waits until the test releases it (or its signal aborts). */
  function slowUndo() {
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const undoStarted = new Promise<void>((resolve) => (started = resolve));
    const tool = defineTool({
      name: 'reserve',
      description: 'Reserve an item',
      input: z.object({ item: z.string() }),
      execute: ({ item }) => ({ reservation: `res-${item}` }),
      undo: (_args, _output, { signal }) =>
        new Promise<void>((resolve, reject) => {
          started();
          release = resolve;
          signal.addEventListener('abort', () => reject(new Error('undo aborted')), { once: true });
        }),
    });
    return { tool, undoStarted, release: () => release() };
  }

  async function ranRun(tool: ReturnType<typeof slowUndo>['tool'], calls = [reserveCall('c1', 'shirt')]) {
    const ledger = createMemoryLedger();
    const h = createHarness([{ toolCalls: calls }, { text: 'reserved' }], {
      ledger,
      tools: [tool],
      limits: { parallelToolCalls: 1 },
    });
    const chat = h.runtime.session('web:1');
    await chat.send('reserve');
    const ended = await chat.waitForEnd();
    const runId = ended.status === 'ended' ? ended.run.runId : '';
    return { h, chat, ledger, runId };
  }

  it('waits for the undo to finish and records it done when it finishes within the timeout', async () => {
    const slow = slowUndo();
    const { h, chat, ledger, runId } = await ranRun(slow.tool);
    const undoing = chat.undo(runId);
    await slow.undoStarted;
    let closed = false;
    const closing = h.runtime.close({ timeoutMs: 5_000 }).then(() => (closed = true));
    await h.clock.advance(1_000);
    expect(closed).toBe(false);
    slow.release();
    await h.clock.advance(0);
    await closing;
    expect(await undoing).toMatchObject({ steps: [{ toolCallId: 'c1', status: 'done' }] });
    expect(await ledger.listCompensations(runId)).toMatchObject([{ seq: 1, status: 'done' }]);
  });

  it('aborts the undo and records the compensation in doubt, not pending, when the timeout expires', async () => {
    const slow = slowUndo();
    const { h, chat, ledger, runId } = await ranRun(slow.tool);
    const undoing = chat.undo(runId);
    await slow.undoStarted;
    const closing = h.runtime.close({ timeoutMs: 5_000 });
    await h.clock.advance(5_000);
    await closing;
    expect(await undoing).toMatchObject({ steps: [{ toolCallId: 'c1', status: 'in_doubt' }] });
    expect(await ledger.listCompensations(runId)).toMatchObject([{ seq: 1, status: 'in_doubt' }]);
  });

  it('aborts the undo when the session is aborted: the compensation in progress is in doubt, the rest stay pending', async () => {
    const slow = slowUndo();
    const calls = [reserveCall('c1', 'shirt'), reserveCall('c2', 'shoes')];
    const { h, chat, ledger, runId } = await ranRun(slow.tool, calls);
    let settled = false;
    const undoing = chat.undo(runId).finally(() => (settled = true));
    await slow.undoStarted;
    expect(await chat.abort({ reason: 'operator stop' })).toBe(true);
    await h.clock.advance(0);
    expect(settled).toBe(true);
    expect(await undoing).toEqual({
      runId,
      steps: [
        {
          seq: 2,
          toolCallId: 'c2',
          tool: 'reserve',
          status: 'in_doubt',
          error: { code: 'cancelled', message: 'operator stop' },
        },
      ],
    });
    expect(await ledger.listCompensations(runId)).toMatchObject([
      { seq: 1, status: 'pending' },
      { seq: 2, status: 'in_doubt' },
    ]);
    await h.close();
  });
});
