import { describe, expect, it } from 'vitest';
import { createDemoClock } from '../../src/cli/demo/demo-clock.js';
import { watchLedgerActivity } from '../../src/cli/demo/ledger-activity.js';
import type { Ledger } from '../../src/ledger/contract/ledger.js';

const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

async function hops(count: number): Promise<void> {
  for (let hop = 0; hop < count; hop++) await nextTurn();
}

describe('createDemoClock', () => {
  it('fires the next timer only once the work the last one started settled when it takes many turns', async () => {
    let work: Promise<void> = Promise.resolve();
    const clock = createDemoClock(() => work);
    const order: string[] = [];
    clock.setTimeout(() => {
      work = hops(25).then(() => {
        order.push('first done');
      });
    }, 10);
    clock.setTimeout(() => order.push('second'), 10);
    await clock.advance(10);
    expect(order).toEqual(['first done', 'second']);
    expect(clock.now()).toBe(10);
  });

  it('fires timers in due order and leaves later ones when advanced part of the way', async () => {
    const clock = createDemoClock(() => Promise.resolve());
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(30), 30);
    clock.setTimeout(() => fired.push(5), 5);
    const cleared = clock.setTimeout(() => fired.push(7), 7);
    clock.clearTimeout(cleared);
    await clock.advance(20);
    expect(fired).toEqual([5]);
    await clock.advance(10);
    expect(fired).toEqual([5, 30]);
    await expect(clock.advance(-1)).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

/** A ledger stand-in whose one call commits after `turns` event-loop turns, like a group commit. */
function slowLedger(turns: number, calls: string[]): Ledger {
  return {
    async appendEvents(name: string) {
      await hops(turns);
      calls.push(name);
    },
    never: () => new Promise<void>(() => undefined),
  } as unknown as Ledger;
}

describe('watchLedgerActivity', () => {
  it('goes quiet only after a chain of ledger calls and the code awaiting them ran', async () => {
    const calls: string[] = [];
    const watched = watchLedgerActivity(slowLedger(2, calls));
    const chained = watched.ledger as unknown as { appendEvents(name: string): Promise<void> };
    void (async () => {
      for (let step = 0; step < 8; step++) await chained.appendEvents(`write ${step}`);
    })();
    await watched.quiet();
    expect(calls).toHaveLength(8);
  });

  it('goes quiet when a call waits on something that does not move', async () => {
    const watched = watchLedgerActivity(slowLedger(1, []));
    void (watched.ledger as unknown as { never(): Promise<void> }).never();
    await expect(watched.quiet()).resolves.toBeUndefined();
  });
});
