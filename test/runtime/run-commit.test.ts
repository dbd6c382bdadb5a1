import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

/**
 * A memory ledger whose group commit fails like a full disk: once `failCloses` closes of a completed run are
 * refused, every write of that synchronous stretch (the run's row and its run.ended) rejects together, as a rolled
 * back transaction would (a later stretch writes again); `failTurn` refuses the assistant turn with that text.
 */
function failingLedger(options: { failCloses?: number; failTurn?: string }): Ledger {
  const ledger = createMemoryLedger();
  let closesToFail = options.failCloses ?? 0;
  let broken = false;
  const fail = () => Promise.reject(new Error('disk full'));
  const breakStretch = (): void => {
    broken = true;
    queueMicrotask(() => {
      broken = false;
    });
  };
  return Object.assign(Object.create(ledger) as Ledger, {
    writesAreImmediate: false,
    closeRun: (...args: Parameters<Ledger['closeRun']>) => {
      if (closesToFail > 0) {
        closesToFail--;
        breakStretch();
      }
      return broken ? fail() : ledger.closeRun(...args);
    },
    appendEvents: (...args: Parameters<Ledger['appendEvents']>) =>
      broken ? fail() : ledger.appendEvents(...args),
    appendTurns: (...args: Parameters<Ledger['appendTurns']>) =>
      args[0].some((turn) => turn.role === 'assistant' && turn.content === options.failTurn)
        ? fail()
        : ledger.appendTurns(...args),
  });
}

describe('run commit', () => {
  it('leaves a run whose commit failed failed, with one run.ended saying why, and the session going on', async () => {
    const ledger = failingLedger({ failCloses: 1 });
    const errors: unknown[] = [];
    const h = createHarness([{ text: 'first' }, { text: 'second' }], {
      ledger,
      onError: (e) => errors.push(e),
    });
    const chat = h.runtime.session('chat:1');
    await chat.send({ id: 'a', text: 'one' });
    const ended = await chat.waitForEnd({ timeoutMs: 1000 });
    const error = { code: 'ledger_unavailable', message: 'the run could not be committed: disk full' };
    expect(ended).toMatchObject({ status: 'ended', run: { runId: 'run_1', status: 'failed', error } });
    expect(await ledger.getRun('run_1')).toMatchObject({ status: 'failed', text: 'first', error });
    expect(errors).toHaveLength(2);
    await chat.send({ id: 'b', text: 'two' });
    expect(await chat.waitForEnd({ timeoutMs: 1000 })).toMatchObject({
      run: { runId: 'run_2', status: 'completed' },
    });
    await h.close();
    const ends = h.of('run.ended').map((event) => [event.runId, event.status]);
    expect(ends).toEqual([
      ['run_1', 'failed'],
      ['run_2', 'completed'],
    ]);
    const recorded = await ledger.readEvents({ sessionKey: 'chat:1', after: 0, limit: 100 });
    expect(recorded.filter((event) => event.type === 'run.ended').map((event) => event.runId)).toEqual([
      'run_1',
      'run_2',
    ]);
  });

  it('never records a run completed when one of its turns was lost', async () => {
    const ledger = failingLedger({ failTurn: 'lost words' });
    const h = createHarness([{ text: 'lost words' }], { ledger, onError: () => undefined });
    const chat = h.runtime.session('chat:1');
    await chat.send({ id: 'a', text: 'one' });
    const ended = await chat.waitForEnd({ timeoutMs: 1000 });
    expect(ended).toMatchObject({ run: { status: 'failed', error: { code: 'ledger_unavailable' } } });
    expect((await ledger.getRun('run_1'))?.error?.message).toBe(
      'a turn of the run was not recorded: disk full',
    );
    await h.close();
  });

  it('leaves the run open for the next start when its failure cannot be written either: its recorded answer completes it', async () => {
    const ledger = failingLedger({ failCloses: 2 });
    const h = createHarness([{ text: 'first' }], { ledger, onError: () => undefined });
    const chat = h.runtime.session('chat:1');
    await chat.send({ id: 'a', text: 'one' });
    expect(await chat.waitForEnd({ timeoutMs: 1000 })).toMatchObject({ run: { status: 'failed' } });
    expect(await ledger.getRun('run_1')).toMatchObject({ status: 'running' });
    await h.close();
    const restarted = createHarness([], { ledger: Object.getPrototypeOf(ledger) as Ledger });
    await restarted.runtime.session('chat:1').waitForEnd({ timeoutMs: 10 });
    // The resume finds the run's answer recorded whole: it is closed completed, with no model call made again.
    expect(await ledger.getRun('run_1')).toMatchObject({ status: 'completed', text: 'first' });
    expect(restarted.of('run.resumed')).toMatchObject([{ runId: 'run_1', attempt: 1, reason: 'crash' }]);
    await restarted.close();
  });
});
