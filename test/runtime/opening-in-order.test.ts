import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, type Ledger } from 'agentlanes';
import { createDeferred } from '../../src/core/deferred.js';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { createHarness } from '../support/runtime-harness.js';

/**
 * A memory ledger that says its writes commit in call order (as SQLite's one connection does), whose run openings
 * wait for `gate` (a COMMIT not done yet) and fail when `fail` is set.
 */
function inOrderLedger(gate: Promise<void>, fail = false): Ledger {
  const ledger = createMemoryLedger();
  const openRun = ledger.openRun.bind(ledger);
  return Object.assign(Object.create(ledger) as Ledger, {
    writesAreImmediate: false,
    writesCommitInOrder: true,
    openRun: async (...args: Parameters<Ledger['openRun']>) => {
      await gate;
      if (fail) throw new Error('disk full');
      return openRun(...args);
    },
  });
}

function lookupTool(calls: { count: number }) {
  return defineTool({
    name: 'lookup',
    description: 'Look an order up',
    input: z.object({ orderId: z.string() }),
    execute: () => ({ found: ++calls.count }),
  });
}

describe('a new run on a ledger whose writes commit in order', () => {
  it('is the SQLite ledger (one connection commits its writes in call order), not the memory ledger', async () => {
    const sqlite = createSqliteLedger({ path: ':memory:' });
    expect(sqlite.writesCommitInOrder).toBe(true);
    expect(createMemoryLedger().writesCommitInOrder).toBeUndefined();
    await sqlite.close();
  });

  it('calls its model before its opening is durable, and no tool before it is', async () => {
    const gate = createDeferred<void>();
    const calls = { count: 0 };
    const h = createHarness(
      [{ toolCalls: [{ id: 'call-1', name: 'lookup', args: { orderId: 'A1' } }] }, { text: 'found it' }],
      { tools: [lookupTool(calls)], ledger: inOrderLedger(gate.promise) },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('where is A1?');
    await h.clock.advance(10);
    expect(h.model.requests).toHaveLength(1);
    expect(calls.count).toBe(0);
    gate.resolve();
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(calls.count).toBe(1);
    await h.close();
  });

  it('never runs a tool and never ends completed when its opening could not be recorded', async () => {
    const gate = createDeferred<void>();
    const calls = { count: 0 };
    const errors: unknown[] = [];
    const h = createHarness(
      [{ toolCalls: [{ id: 'call-1', name: 'lookup', args: { orderId: 'A1' } }] }, { text: 'found it' }],
      {
        tools: [lookupTool(calls)],
        ledger: inOrderLedger(gate.promise, true),
        onError: (error) => errors.push(error),
      },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('where is A1?');
    await h.clock.advance(10);
    gate.resolve();
    const ended = await chat.waitForEnd({ timeoutMs: 1000 });
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'failed' } });
    expect(calls.count).toBe(0);
    expect(errors.length).toBeGreaterThan(0);
    await h.close();
  });
});
