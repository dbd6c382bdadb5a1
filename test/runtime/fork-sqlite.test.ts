import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime, createSqliteLedger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';

// Apart from fork.test.ts because it counts rows in the SQLite file itself, which the suites run on Postgres
// (postgres-suites-*.test.ts) do not have.

describe('runtime.fork', () => {
  it('stores a fork of a 10,000-turn transcript as one row, and a restart keeps both sessions', async () => {
    const path = tempLedgerPath('fork');
    const seeded = createSqliteLedger({ path });
    const usage = { inputTokens: 0, outputTokens: 0 };
    await seeded.openRun({
      runId: 'old',
      sessionKey: 'chat:p',
      status: 'running',
      messageIds: [],
      provider: 'scripted',
      model: 'm',
      startedAt: 0,
      usage,
      text: '',
    });
    const turns = Array.from({ length: 10_000 }, (_, index) => ({
      sessionKey: 'chat:p',
      runId: 'old',
      index,
      role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `t${index}`,
      at: index,
    }));
    await seeded.appendTurns(turns);
    await seeded.closeRun('old', { status: 'completed', endedAt: 1, text: '', usage });
    await seeded.close();
    const count = (table: string): number => {
      const raw = new Database(path, { readonly: true });
      const row = raw.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
      raw.close();
      return row.n;
    };
    const open = () => {
      const clock = fakeClock({ now: 10 });
      const model = scriptedModel([{ text: 'child says' }], { clock });
      const ids = sequentialIds();
      const runtime = createRuntime({
        ledger: { path },
        providers: { scripted: model },
        model: { provider: 'scripted', model: 'm' },
        clock,
        ids,
        limits: { historyTurns: 4 },
      });
      return { runtime, model };
    };
    const first = open();
    expect(await first.runtime.fork('chat:p', 'chat:c')).toMatchObject({ turns: 10_000, upToRunId: 'old' });
    await first.runtime.session('chat:c').send({ id: 'm1', text: 'go on' });
    await first.runtime.session('chat:c').waitForEnd({ timeoutMs: 1000 });
    expect(first.model.requests[0]?.messages.map((message) => message.content)).toEqual([
      't9996',
      't9997',
      't9998',
      't9999',
      'go on',
    ]);
    await first.runtime.close();
    expect(count('turns')).toBe(10_002);
    expect(count('session_forks')).toBe(1);
    const second = open();
    const child = await second.runtime.session('chat:c').transcript();
    expect(child).toHaveLength(10_002);
    expect(child.slice(-3).map((turn) => turn.content)).toEqual(['t9999', 'go on', 'child says']);
    expect(await second.runtime.session('chat:p').transcript()).toHaveLength(10_000);
    await second.runtime.close();
  });
});
