import { describe, expect, it } from 'vitest';
import { createSessionLoader } from '../../src/actors/session-door.js';
import { RuntimeError, isRuntimeError } from '../../src/core/errors.js';
import { createMemoryLedger, type Ledger, type SessionLoad } from '../../src/ledger/index.js';
import { countingLoads } from '../support/counting-loads.js';

/** A memory ledger whose batch and single reads are counted (the keys of each batch, in order). */
function countingLedger(overrides: Partial<Ledger> = {}) {
  const inner = createMemoryLedger();
  return { inner, ...countingLoads(inner, overrides) };
}

const pendingOf = async (promise: Promise<{ pending: readonly { messageId: string }[] }>) =>
  (await promise).pending.map((record) => record.messageId);

describe('createSessionLoader', () => {
  it('reads 3 sessions asked for in the same stretch with one loadSessions call and no loadSession', async () => {
    const { inner, ledger, batches, singles } = countingLedger();
    for (const key of ['a', 'b', 'c']) {
      await inner.appendMessage({
        sessionKey: key,
        messageId: `${key}1`,
        order: 1,
        text: 'hi',
        mode: 'followup',
        status: 'pending',
        acceptedAt: 0,
      });
    }
    const load = createSessionLoader(ledger);
    const states = await Promise.all(['a', 'b', 'c', 'b'].map((key) => pendingOf(load(key))));
    expect(states).toEqual([['a1'], ['b1'], ['c1'], ['b1']]);
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(singles).toEqual([]);
  });

  it('makes a second call for a key asked for after the first batch was read', async () => {
    const { ledger, batches } = countingLedger();
    const load = createSessionLoader(ledger);
    await Promise.all([load('a'), load('b')]);
    await load('c');
    expect(batches).toEqual([['a', 'b'], ['c']]);
  });

  it('reads 1,025 sessions asked for at once in batches of 512, 512 and 1', async () => {
    const { ledger, batches } = countingLedger();
    const load = createSessionLoader(ledger);
    const keys = Array.from({ length: 1025 }, (_, index) => `s${index}`);
    const states = await Promise.all(keys.map((key) => load(key)));
    expect(states).toHaveLength(1025);
    expect(batches.map((batch) => batch.length)).toEqual([512, 512, 1]);
    expect(batches.flat()).toEqual(keys);
  });

  it('fails only the session the ledger answered with an error when one of 3 is corrupt', async () => {
    const corrupt = new RuntimeError('ledger_corrupt', 'sessions row "b": bad', {
      details: { table: 'sessions', row: '"b"', sessionKey: 'b' },
    });
    const inner = createMemoryLedger();
    const { ledger } = countingLedger({
      loadSessions: async (keys) =>
        Promise.all(
          keys.map(async (sessionKey): Promise<SessionLoad> =>
            sessionKey === 'b'
              ? { sessionKey, error: corrupt }
              : { sessionKey, state: await inner.loadSession(sessionKey) },
          ),
        ),
    });
    const load = createSessionLoader(ledger);
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((key) => load(key)));
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(settled[1]?.status === 'rejected' ? settled[1].reason : undefined).toBe(corrupt);
  });

  it('fails every session of the batch when the read itself fails', async () => {
    const closed = new RuntimeError('runtime_closed', 'the ledger is closed');
    const { ledger } = countingLedger({ loadSessions: () => Promise.reject(closed) });
    const load = createSessionLoader(ledger);
    const settled = await Promise.allSettled([load('a'), load('b')]);
    expect(
      settled.map((result): unknown => (result.status === 'rejected' ? result.reason : 'loaded')),
    ).toEqual([closed, closed]);
  });

  it('rejects with internal a key the ledger left out of its answer', async () => {
    const { ledger } = countingLedger({ loadSessions: () => Promise.resolve([]) });
    const error: unknown = await createSessionLoader(ledger)('a').catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'internal')).toBe(true);
  });

  it('reads each key with loadSession when the ledger has no loadSessions', async () => {
    const { ledger, singles } = countingLedger();
    const single: Ledger = { ...ledger };
    delete single.loadSessions;
    const load = createSessionLoader(single);
    await Promise.all([load('a'), load('b')]);
    expect(singles).toEqual(['a', 'b']);
  });
});
