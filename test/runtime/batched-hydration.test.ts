import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime, createSqliteLedger, isRuntimeError } from 'agentlanes';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { countingLoads } from '../support/counting-loads.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** A ledger file holding three hibernated sessions (a record each, nothing pending); then `damage` runs. */
async function threeHibernated(damage: string[]): Promise<string> {
  const path = tempLedgerPath('batched-hydration');
  const ledger = createSqliteLedger({ path });
  for (const sessionKey of ['chat:a', 'chat:b', 'chat:c']) {
    await ledger.putSession({
      sessionKey,
      override: {},
      snapshot: undefined,
      epoch: 1,
      lastSeq: 0,
      updatedAt: 0,
    });
  }
  await ledger.close();
  const raw = new Database(path);
  for (const statement of damage) raw.exec(statement);
  raw.close();
  return path;
}

/** A runtime on the file whose ledger counts its batch reads (the keys of each) and its single-session reads. */
function countingRuntime(path: string) {
  const { ledger, batches, singles } = countingLoads(createSqliteLedger({ path }));
  const clock = fakeClock({ now: 10_000 });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(() => ({ text: 'done' }), { clock }) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
    clock,
    onError: () => undefined,
  });
  return { runtime, clock, batches, singles };
}

/** Each session's first message, sent at once: the disposition, or the error's code. */
function sendAtOnce(runtime: ReturnType<typeof countingRuntime>['runtime'], keys: readonly string[]) {
  return Promise.all(
    keys.map((key) =>
      runtime
        .session(key)
        .send({ id: `${key}-1`, text: 'hello' })
        .then(
          (result) => result.disposition,
          (error: unknown) => (isRuntimeError(error) ? error.code : String(error)),
        ),
    ),
  );
}

describe('createRuntime (sessions hydrating together)', () => {
  it('reads 3 hibernated sessions sent to in the same stretch with one batch read and no single one', async () => {
    const app = countingRuntime(await threeHibernated([]));
    expect(await sendAtOnce(app.runtime, ['chat:a', 'chat:b', 'chat:c'])).toEqual([
      'started',
      'started',
      'started',
    ]);
    expect(app.batches).toEqual([['chat:a', 'chat:b', 'chat:c']]);
    expect(app.singles).toEqual([]);
    await app.clock.advance(100);
    const ended = await app.runtime.session('chat:b').waitForEnd({ timeoutMs: 1000 });
    expect(ended.status === 'ended' ? ended.run.status : ended.status).toBe('completed');
    const closing = app.runtime.close();
    await app.clock.runAll();
    await closing;
  });

  it('fails only the session whose record is corrupt among 3 hydrating together', async () => {
    const path = await threeHibernated(["UPDATE sessions SET override = '[1]' WHERE session_key = 'chat:b'"]);
    const app = countingRuntime(path);
    expect(await sendAtOnce(app.runtime, ['chat:a', 'chat:b', 'chat:c'])).toEqual([
      'started',
      'ledger_corrupt',
      'started',
    ]);
    expect(app.batches).toEqual([['chat:a', 'chat:b', 'chat:c']]);
    const closing = app.runtime.close();
    await app.clock.runAll();
    await closing;
  });
});
