import { describe, expect, it } from 'vitest';
import { createRuntime } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { ledgerKinds } from '../support/temp-ledger.js';

const ledgers = ledgerKinds;

describe.each(['memory', 'sqlite'] as const)('waitForEnd right after send on the %s ledger', (ledger) => {
  it('answers ended with the run when that run failed before waitForEnd was called', async () => {
    const clock = fakeClock({ now: 0 });
    const runtime = createRuntime({
      ledger: ledgers[ledger](),
      providers: {
        scripted: scriptedModel(() => ({ error: { status: 400, message: 'bad request' } }), { clock }),
      },
      model: { provider: 'scripted', model: 'm' },
      clock,
      ids: sequentialIds(),
      random: () => 0.5,
    });
    const chat = runtime.session('web:1');
    for (let attempt = 0; attempt < 12; attempt++) {
      const sent = await chat.send({ id: `m${attempt}`, text: 'hi' }, { mode: 'followup', debounceMs: 0 });
      expect(sent.disposition).toBe('started');
      // Let the failing run settle completely before asking (well before the session would hibernate).
      await clock.advance(10);
      await new Promise((resolve) => setImmediate(resolve));
      expect(chat.status().state).toBe('idle');
      const waited = await chat.waitForEnd();
      expect(waited).toMatchObject({ status: 'ended', run: { runId: sent.runId, status: 'failed' } });
    }
    await runtime.close();
  });

  it('answers idle once a newer wait already saw the run end and nothing was sent since', async () => {
    const clock = fakeClock({ now: 0 });
    const runtime = createRuntime({
      ledger: ledgers[ledger](),
      providers: { scripted: scriptedModel([{ text: 'hello' }], { clock }) },
      model: { provider: 'scripted', model: 'm' },
      clock,
      ids: sequentialIds(),
      random: () => 0.5,
    });
    const chat = runtime.session('web:1');
    const sent = await chat.send('hi');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { runId: sent.runId } });
    expect(await chat.waitForEnd()).toEqual({ status: 'idle' });
    await runtime.close();
  });
});
