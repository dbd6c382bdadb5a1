import { describe, expect, it } from 'vitest';
import { createSqliteLedger, type Ledger } from 'agentlanes';
import type { TurnRecord } from 'agentlanes/ledger';
import { createHarness } from '../support/runtime-harness.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/**
 * A SQLite ledger (Postgres in postgres-suites-b.test.ts) that records the turn writes and, for each close, the writes it was tied to; `refuse` makes the
 * assistant turn with that text one the file refuses (its content missing): it fails alone.
 */
function watchedLedger(refuse?: string) {
  const ledger = createSqliteLedger({ path: tempLedgerPath('tied-close') });
  const turnWrites: Promise<void>[] = [];
  const closes: { runId: string; after: readonly Promise<void>[] }[] = [];
  const broken = (turn: TurnRecord): TurnRecord =>
    turn.role === 'assistant' && turn.content === refuse
      ? { ...turn, content: null as unknown as string }
      : turn;
  const watched: Ledger = Object.assign(Object.create(ledger) as Ledger, {
    appendTurns: (records: readonly TurnRecord[]) => {
      const written = ledger.appendTurns(records.map(broken));
      turnWrites.push(written);
      return written;
    },
    closeRun: (...args: Parameters<Ledger['closeRun']>) => {
      closes.push({ runId: args[0], after: args[2]?.after ?? [] });
      return ledger.closeRun(...args);
    },
  });
  return { ledger: watched, closes, turnWrites };
}

describe('a run close tied to its turns', () => {
  it("ties a run's close to its turns instead of waiting for their COMMIT, and it commits with them", async () => {
    const { ledger, closes, turnWrites } = watchedLedger();
    const h = createHarness([{ text: 'first' }], { ledger });
    const chat = h.runtime.session('chat:1');
    await chat.send({ id: 'a', text: 'one' });
    const ended = await chat.waitForEnd({ timeoutMs: 1000 });
    expect(ended).toMatchObject({
      status: 'ended',
      run: { runId: 'run_1', status: 'completed', text: 'first' },
    });
    expect(closes).toHaveLength(1);
    // Tied to every turn it wrote (the user's and the answer), and on SQLite to its opening, not waited for.
    expect(turnWrites.length).toBeGreaterThan(0);
    for (const turns of turnWrites) expect(closes[0]?.after).toContain(turns);
    expect(await ledger.getRun('run_1')).toMatchObject({ status: 'completed', text: 'first' });
    expect((await ledger.listRunTurns('run_1')).map((turn) => turn.role)).toEqual(['user', 'assistant']);
    await h.close();
  });

  it('never records a run completed when its last turn is refused in the transaction its close joined', async () => {
    const { ledger } = watchedLedger('lost words');
    const errors: unknown[] = [];
    const h = createHarness([{ text: 'lost words' }, { text: 'next' }], {
      ledger,
      onError: (error) => errors.push(error),
    });
    const chat = h.runtime.session('chat:1');
    await chat.send({ id: 'a', text: 'one' });
    const ended = await chat.waitForEnd({ timeoutMs: 1000 });
    expect(ended).toMatchObject({
      run: { runId: 'run_1', status: 'failed', error: { code: 'ledger_unavailable' } },
    });
    const stored = await ledger.getRun('run_1');
    expect(stored).toMatchObject({ status: 'failed' });
    expect(stored?.error?.message).toMatch(/^a turn of the run was not recorded: .*not[ -]null/i);
    expect((await ledger.listRunTurns('run_1')).map((turn) => turn.role)).toEqual(['user']);
    expect(errors.length).toBeGreaterThan(0);
    // One run.ended, failed: the completed one written with the refused close was refused with it.
    await h.settled();
    expect(h.of('run.ended').map((event) => [event.runId, event.status])).toEqual([['run_1', 'failed']]);
    // The session goes on.
    await chat.send({ id: 'b', text: 'two' });
    expect(await chat.waitForEnd({ timeoutMs: 1000 })).toMatchObject({
      run: { runId: 'run_2', status: 'completed', text: 'next' },
    });
    await h.close();
  });
});
