import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, isRuntimeError, type Ledger } from 'agentlanes';
import { createDeferred } from '../../src/core/deferred.js';
import { createHarness } from '../support/runtime-harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'Return the args',
  input: z.object({ value: z.string() }),
  execute: ({ value }) => ({ value }),
});

/** A memory ledger whose `closeRun` waits for `gate` (or fails with `failure`). */
function gatedLedger(gate: Promise<void>, failure?: Error): Ledger {
  const ledger = createMemoryLedger();
  const closeRun = ledger.closeRun.bind(ledger);
  return Object.assign(Object.create(ledger) as Ledger, {
    closeRun: async (...args: Parameters<Ledger['closeRun']>) => {
      await gate;
      if (failure !== undefined) throw failure;
      return closeRun(...args);
    },
  });
}

describe('session.executePlan', () => {
  it('does not answer before the end of its run is in the ledger', async () => {
    const gate = createDeferred<void>();
    const ledger = gatedLedger(gate.promise);
    const h = createHarness([], { tools: [echo], ledger });
    const chat = h.runtime.session('web:1');
    let answered = false;
    const done = chat
      .executePlan({ steps: [{ id: 'a', tool: 'echo', args: { value: 'x' } }] })
      .then((result) => {
        answered = true;
        return result;
      });
    await h.clock.advance(10);
    expect(answered).toBe(false);
    gate.resolve();
    const result = await done;
    expect(result.status).toBe('completed');
    expect(await ledger.getRun(result.runId)).toMatchObject({ status: 'completed' });
    await h.close();
  });

  it('rejects with ledger_unavailable when the end of its run cannot be recorded', async () => {
    const h = createHarness([], {
      tools: [echo],
      ledger: gatedLedger(Promise.resolve(), new Error('disk full')),
      onError: () => undefined,
    });
    const chat = h.runtime.session('web:1');
    const failed = await chat.executePlan({ steps: [{ id: 'a', tool: 'echo', args: { value: 'x' } }] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isRuntimeError(failed, 'ledger_unavailable')).toBe(true);
    await h.close();
  });
});
