import { describe, expect, it } from 'vitest';
import { createSqliteLedger, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { advance, answersPerPrompt, openFaultRuntime } from '../support/disk-fault.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** Ledger calls that only read: they go through while the disk is "full". */
const readPrefixes = [
  'get',
  'list',
  'load',
  'last',
  'read',
  'runText',
  'remembered',
  'onCorruptRow',
  'close',
];

/** The SQLite ledger with a switch that makes every write fail as a full disk does (SqliteError SQLITE_FULL). */
function faultyLedger(path: string) {
  const ledger = createSqliteLedger({ path });
  const state = { full: false, refused: 0 };
  const wrapped = new Proxy(ledger, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (readPrefixes.some((prefix) => property.startsWith(prefix))) return method.bind(target);
      return (...args: unknown[]) => {
        if (!state.full) return method.apply(target, args);
        state.refused++;
        const error = Object.assign(new Error('database or disk is full'), {
          name: 'SqliteError',
          code: 'SQLITE_FULL',
        });
        return Promise.reject(error);
      };
    },
  });
  return { ledger: wrapped, raw: ledger, state };
}

describe('createRuntime (a ledger whose disk fails while runs stream)', () => {
  it('runs every acknowledged message once and no tool twice when the writes fail for 3 s, then heal', async () => {
    const path = tempLedgerPath('ledger-fault');
    const faulty = faultyLedger(path);
    const executed: string[] = [];
    const errors: unknown[] = [];
    const { runtime, clock, model } = openFaultRuntime(faulty.ledger, { executed, errors }, 10_000, {
      words: 20,
    });
    const events: RuntimeEvent[] = [];
    const stream = (async () => {
      for await (const event of runtime.events()) events.push(event);
    })();
    const keys = Array.from({ length: 10 }, (_, index) => `chat:${index}`);
    const acknowledged: string[] = [];
    for (const [index, key] of keys.entries()) {
      const first = index % 3 === 0 ? `tool first ${index}` : `first ${index}`;
      await runtime.session(key).send({ id: `${key}-1`, text: first });
      await runtime.session(key).send({ id: `${key}-2`, text: `second ${index}` });
      acknowledged.push(first, `second ${index}`);
    }
    await advance(clock, 100);
    faulty.state.full = true;
    // Not acknowledged: the sender sees the ledger's failure (the SQLite ledger's is coded ledger_unavailable).
    await expect(runtime.session('chat:0').send({ id: 'during', text: 'sent while full' })).rejects.toThrow();
    await advance(clock, 3_000);
    const streamedWhileFull = model.calls;
    await advance(clock, 1_000);
    // A run stopped at the first write it could not make: nothing new reached the model while the disk was full.
    expect(model.calls).toBe(streamedWhileFull);
    faulty.state.full = false;
    await advance(clock, 30_000);

    for (const prompt of acknowledged)
      expect([prompt, answersPerPrompt(model.requests).get(prompt)]).toEqual([prompt, 1]);
    expect(new Set(executed).size).toBe(executed.length);
    const unavailable = errors.filter((error) => isRuntimeError(error, 'ledger_unavailable'));
    expect(unavailable).toHaveLength(1);
    expect((unavailable[0] as Error).message).not.toContain(path);
    expect(errors.filter((error) => (error as { code?: unknown }).code === 'SQLITE_FULL')).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(events.filter((event) => event.type === 'ledger.unavailable')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'ledger.available')).toHaveLength(1);
    expect(await faulty.raw.listOpenRuns()).toEqual([]);
    expect(await faulty.raw.listSessionsWithPending()).toEqual([]);
    for (const key of keys) expect(runtime.session(key).status()).toMatchObject({ state: 'idle', queued: 0 });

    const closing = runtime.close();
    await clock.runAll();
    await closing;
    await stream;
    await faulty.raw.close();

    const reopened = openFaultRuntime(createSqliteLedger({ path }), { executed, errors }, 100_000, {
      words: 20,
    });
    // Startup recovery runs on the first advance: whatever it would run again would reach the model here.
    await advance(reopened.clock, 5_000);
    expect(reopened.model.calls).toBe(0);
    expect(new Set(executed).size).toBe(executed.length);
    const closingAgain = reopened.runtime.close();
    await reopened.clock.runAll();
    await closingAgain;
  });
});
