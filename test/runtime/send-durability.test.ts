import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger, type QueueMode } from 'agentlanes';
import { type InboxRecord } from 'agentlanes/ledger';
import { createDeferred, type Deferred } from '../../src/core/deferred.js';
import { createHarness, type Harness } from '../support/runtime-harness.js';

/** A memory ledger whose inbox commits wait for the test to open the gate; the row exists only once committed. */
function gatedLedger(failure?: Error) {
  const inner = createMemoryLedger();
  const state: { gate: Deferred<void> | undefined; waiting: InboxRecord[] } = {
    gate: undefined,
    waiting: [],
  };
  const ledger: Ledger = {
    ...inner,
    appendMessage: async (record) => {
      const gate = state.gate;
      if (gate !== undefined) {
        state.waiting.push(record);
        await gate.promise;
      }
      if (failure !== undefined) throw failure;
      await inner.appendMessage(record);
    },
  };
  return {
    inner,
    ledger,
    state,
    close: () => {
      state.gate = createDeferred<void>();
    },
    open: () => {
      state.gate?.resolve();
      state.gate = undefined;
    },
  };
}

/** Track whether a promise settled, without awaiting it. */
function track<T>(promise: Promise<T>) {
  const seen = { settled: false };
  void promise.then(
    () => (seen.settled = true),
    () => (seen.settled = true),
  );
  return seen;
}

async function inboxIds(inner: Ledger): Promise<string[]> {
  return (await inner.listMessages('telegram:1')).map((record) => record.messageId);
}

/** The events a message produces once admitted; none may appear before its row is committed. */
function admittedEvents(h: Harness, messageId: string) {
  return h.events.filter((event) => 'messageId' in event && event.messageId === messageId);
}

describe('Session.send durability', () => {
  it('does not resolve before its inbox row is committed when the session is idle', async () => {
    const gated = gatedLedger();
    const h = createHarness([{ text: 'ok' }], { ledger: gated.ledger });
    const chat = h.runtime.session('telegram:1');
    gated.close();
    const sending = chat.send({ id: 'a', text: 'hi' });
    const seen = track(sending);
    await h.clock.advance(0);
    expect(gated.state.waiting.map((record) => record.messageId)).toEqual(['a']);
    expect(seen.settled).toBe(false);
    expect(await inboxIds(gated.inner)).toEqual([]);
    expect(admittedEvents(h, 'a')).toEqual([]);
    expect(h.model.calls).toBe(0);

    gated.open();
    await expect(sending).resolves.toEqual({ messageId: 'a', disposition: 'started', runId: 'run_1' });
    expect(await inboxIds(gated.inner)).toEqual(['a']);
    await h.close();
  });

  it.each<[QueueMode, string]>([
    ['followup', 'queued'],
    ['collect', 'collected'],
    ['steer', 'steered'],
    ['interrupt', 'interrupted'],
  ])(
    'does not resolve before its inbox row is committed when the session is busy and the mode is %s',
    async (mode, disposition) => {
      const gated = gatedLedger();
      const h = createHarness([{ hang: true }, { text: 'ok' }, { text: 'ok' }], { ledger: gated.ledger });
      const chat = h.runtime.session('telegram:1');
      await chat.send({ id: 'a', text: 'first' });
      await h.clock.advance(0);
      gated.close();
      const sending = chat.send({ id: 'b', text: 'second' }, { mode });
      const seen = track(sending);
      await h.clock.advance(0);
      expect(seen.settled).toBe(false);
      expect(await inboxIds(gated.inner)).toEqual(['a']);
      expect(admittedEvents(h, 'b')).toEqual([]);

      gated.open();
      await expect(sending).resolves.toMatchObject({ messageId: 'b', disposition });
      expect(await inboxIds(gated.inner)).toEqual(['a', 'b']);
      await chat.abort();
      await h.close();
    },
  );

  it('rejects instead of resolving when the gated commit fails', async () => {
    const gated = gatedLedger(new Error('SQLITE_IOERR: disk I/O error'));
    const h = createHarness([{ text: 'ok' }], { ledger: gated.ledger });
    gated.close();
    const sending = h.runtime.session('telegram:1').send({ id: 'a', text: 'hi' });
    const seen = track(sending);
    await h.clock.advance(0);
    expect(seen.settled).toBe(false);
    gated.open();
    await expect(sending).rejects.toMatchObject({ code: 'ledger_unavailable' });
    expect(await inboxIds(gated.inner)).toEqual([]);
    expect(h.model.calls).toBe(0);
    await h.close();
  });
});
