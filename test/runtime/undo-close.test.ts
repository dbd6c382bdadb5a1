import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type RuntimeOptions } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** A `reserve` tool whose undo ignores its abort signal and finishes only when the test says so. */
function stubbornUndo() {
  const state = { executed: 0, finish: () => undefined as void, started: () => undefined as void };
  const started = new Promise<void>((resolve) => (state.started = resolve));
  const tool = defineTool({
    name: 'reserve',
    description: 'Reserve an item',
    input: z.object({ item: z.string() }),
    execute: ({ item }) => ({ reservation: `res-${item}` }),
    undo: () =>
      new Promise<void>((resolve) => {
        state.executed += 1;
        state.finish = resolve;
        state.started();
      }),
  });
  return { tool, state, started };
}

function options(path: string, tool: ReturnType<typeof stubbornUndo>['tool'], clock = fakeClock({ now: 0 })) {
  const script = [
    { toolCalls: [{ id: 'c1', name: 'reserve', args: { item: 'shirt' } }] },
    { text: 'reserved' },
  ];
  return {
    clock,
    runtime: {
      ledger: { path },
      providers: { scripted: scriptedModel(script, { clock }) },
      model: { provider: 'scripted', model: 'm' },
      tools: [tool],
      clock,
      ids: sequentialIds(),
    } satisfies RuntimeOptions,
  };
}

describe('session.undo across close()', () => {
  it('never starts again a compensation that ignored its signal when close() cut it off, and reports it in doubt', async () => {
    const path = tempLedgerPath('undo-close');
    const stubborn = stubbornUndo();
    const first = options(path, stubborn.tool);
    const runtime = createRuntime(first.runtime);
    const chat = runtime.session('web:1');
    await chat.send('reserve');
    const ended = await chat.waitForEnd();
    const runId = ended.status === 'ended' ? ended.run.runId : '';
    const undoing = chat.undo(runId);
    await stubborn.started;
    const closing = runtime.close({ timeoutMs: 1_000 });
    await first.clock.advance(1_000);
    await closing;
    expect(await undoing).toMatchObject({ steps: [{ toolCallId: 'c1', status: 'in_doubt' }] });
    // The compensation finishes after close() resolved: it ran once, and nothing records it twice.
    stubborn.state.finish();

    const second = options(path, stubborn.tool);
    const reopened = createRuntime(second.runtime);
    const events: string[] = [];
    const controller = new AbortController();
    const reading = (async () => {
      for await (const event of reopened.events({ after: 'now', signal: controller.signal }))
        events.push(event.type);
    })();
    const again = await reopened.session('web:1').undo(runId);
    expect(again).toEqual({
      runId,
      steps: [
        {
          seq: 1,
          toolCallId: 'c1',
          tool: 'reserve',
          status: 'in_doubt',
          error: expect.objectContaining({ code: 'cancelled' }) as unknown,
        },
      ],
    });
    expect(stubborn.state.executed).toBe(1);
    await second.clock.advance(0);
    expect(events).toContain('undo.in_doubt');

    // The operator decides to run it again: only then does it start a second time.
    const retrying = reopened.session('web:1').undo(runId, { inDoubt: 'retry' });
    await second.clock.advance(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    stubborn.state.finish();
    expect(await retrying).toMatchObject({ steps: [{ toolCallId: 'c1', status: 'done' }] });
    expect(stubborn.state.executed).toBe(2);
    const closingSecond = reopened.close();
    await second.clock.runAll();
    await closingSecond;
    controller.abort();
    await reading;
  });
});
