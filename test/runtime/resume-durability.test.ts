import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, type Ledger } from 'agentlanes';
import { createDeferred } from '../../src/core/deferred.js';
import { createHarness } from '../support/runtime-harness.js';

/** A memory ledger whose write of a run's `running` status waits for `gate`. */
function gatedResume(gate: Promise<void>): Ledger {
  const ledger = createMemoryLedger();
  const setRunStatus = ledger.setRunStatus.bind(ledger);
  return Object.assign(Object.create(ledger) as Ledger, {
    setRunStatus: async (...args: Parameters<Ledger['setRunStatus']>) => {
      if (args[1] === 'running') await gate;
      return setRunStatus(...args);
    },
  });
}

describe('a paused run resumed by approve()', () => {
  it('runs the approved call only once the run is recorded as running again', async () => {
    const gate = createDeferred<void>();
    let refunds = 0;
    const refund = defineTool({
      name: 'refund',
      description: 'Refund an order',
      risk: 'high',
      input: z.object({ orderId: z.string() }),
      execute: () => ({ refunded: ++refunds }),
    });
    const h = createHarness(
      [{ toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'A1' } }] }, { text: 'done' }],
      { tools: [refund], ledger: gatedResume(gate.promise) },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('refund A1');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused' });
    await chat.approve({ toolCallId: 'call-1', decision: 'approve' });
    await h.clock.advance(10);
    // A crash now must not find the run paused with its approval recorded and a refund already made.
    expect(refunds).toBe(0);
    gate.resolve();
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(refunds).toBe(1);
    await h.close();
  });
});

describe('a new run', () => {
  it('calls neither the model nor a tool before its run row is durable', async () => {
    const gate = createDeferred<void>();
    let looked = 0;
    const lookup = defineTool({
      name: 'lookup',
      description: 'Look an order up',
      input: z.object({ orderId: z.string() }),
      execute: () => ({ found: ++looked }),
    });
    const ledger = createMemoryLedger();
    const openRun = ledger.openRun.bind(ledger);
    const gated = Object.assign(Object.create(ledger) as Ledger, {
      openRun: async (...args: Parameters<Ledger['openRun']>) => {
        await gate.promise;
        return openRun(...args);
      },
    });
    const h = createHarness(
      [{ toolCalls: [{ id: 'call-1', name: 'lookup', args: { orderId: 'A1' } }] }, { text: 'found it' }],
      { tools: [lookup], ledger: gated },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('where is A1?');
    await h.clock.advance(10);
    expect(h.model.requests).toHaveLength(0);
    expect(looked).toBe(0);
    gate.resolve();
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(looked).toBe(1);
    await h.close();
  });
});
