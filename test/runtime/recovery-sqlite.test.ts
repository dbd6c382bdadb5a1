import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type ScriptEntry } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';

// Apart from recovery.test.ts because it damages a row in the SQLite file itself, which the suites run on Postgres
// (postgres-suites-*.test.ts) do not have.

// One id generator for both "processes": run ids must not repeat across a restart.
const ids = sequentialIds();

/** The first "process" on the file: a runtime whose close runs its timers out. */
function restart(path: string, script: ScriptEntry[]) {
  const clock = fakeClock({ now: 50_000 });
  const runtime = createRuntime({
    ledger: { path },
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 100 },
    clock,
    ids,
  });
  return {
    runtime,
    async close() {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
    },
  };
}

describe('createRuntime (a corrupt row)', () => {
  it('fails only the session whose row is corrupt with ledger_corrupt, at recovery and on send', async () => {
    const path = tempLedgerPath('recovery');
    const first = restart(path, [{ hang: true }]);
    await first.runtime.session('telegram:1').configure({ mode: 'followup' });
    await first.runtime.session('telegram:1').send({ id: 'a', text: 'first' });
    await first.runtime.session('telegram:1').send({ id: 'b', text: 'queued behind it' });
    await first.close(); // the hanging run is aborted at close; b stays queued for the next start
    const raw = new Database(path);
    raw.prepare("UPDATE sessions SET snapshot = '{broken' WHERE session_key = 'telegram:1'").run();
    raw.close();
    const errors: unknown[] = [];
    const clock = fakeClock({ now: 90_000 });
    const runtime = createRuntime({
      ledger: { path },
      providers: { scripted: scriptedModel([{ text: 'fine' }], { clock }) },
      model: { provider: 'scripted', model: 'm' },
      clock,
      ids,
      onError: (error) => errors.push(error),
    });
    const refused = await runtime
      .session('telegram:1')
      .send({ id: 'c', text: 'hello?' })
      .catch((error: unknown) => error);
    expect(isRuntimeError(refused, 'ledger_corrupt')).toBe(true);
    expect((refused as Error).message).toContain('sessions row "telegram:1"');
    expect(errors.some((error) => isRuntimeError(error, 'ledger_corrupt'))).toBe(true);
    expect(await runtime.session('telegram:2').send({ id: 'x', text: 'hi' })).toMatchObject({
      disposition: 'started',
    });
    const closing = runtime.close();
    await clock.runAll();
    await closing;
  });
});
