import { describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

/** Every call answers three words, `tokenDelayMs` apart (a run lasts 2 x tokenDelayMs). */
const answer = (tokenDelayMs: number) => () => ({ text: 'done and dusted', tokenDelayMs });

/** The ledger without its `close`, so a second runtime can open what the first one closed. */
function unclosable(ledger: Ledger): Ledger {
  return { ...ledger, close: () => Promise.resolve() };
}

describe('Runtime.session (hibernation and rehydration)', () => {
  it('stops an idle session after hibernateAfterMs and not before, keeping its snapshot in the ledger', async () => {
    const ledger = createMemoryLedger();
    const h = createHarness(answer(0), { ledger, sessions: { hibernateAfterMs: 1000 } });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(0);
    expect(h.of('run.ended')).toHaveLength(1);
    expect(h.runtime.stats().liveSessions).toBe(1);
    await h.clock.advance(999);
    expect(h.runtime.stats().liveSessions).toBe(1);
    await h.clock.advance(1);
    expect(h.runtime.stats().liveSessions).toBe(0);
    const record = await ledger.getSession('telegram:1');
    const lastSeq = h.events.at(-1)?.seq;
    expect(record).toMatchObject({ sessionKey: 'telegram:1', epoch: 1, lastSeq, updatedAt: 1000 });
    expect(record?.snapshot).toMatchObject({
      value: { idle: 'empty' },
      context: { sessionKey: 'telegram:1', queue: [], seen: [['a', 0]], run: null },
    });
    await h.close();
  });

  it('rehydrates on the next send with its configure() override when it had hibernated', async () => {
    const ledger = createMemoryLedger();
    const h = createHarness(answer(10), { ledger: unclosable(ledger), sessions: { hibernateAfterMs: 100 } });
    const chat = h.runtime.session('telegram:1');
    await chat.configure({ mode: 'followup' });
    expect((await ledger.getSession('telegram:1'))?.override).toEqual({ mode: 'followup' });
    await h.clock.advance(100);
    expect(h.runtime.stats().liveSessions).toBe(0);
    expect(await chat.send({ id: 'a', text: 'first' })).toMatchObject({ disposition: 'started' });
    expect(h.runtime.stats().liveSessions).toBe(1);
    expect(await chat.send({ id: 'b', text: 'second' })).toEqual({
      messageId: 'b',
      disposition: 'queued',
      position: 1,
    });
    expect((await ledger.getSession('telegram:1'))?.epoch).toBe(1);
    await h.close();
    expect((await ledger.getSession('telegram:1'))?.epoch).toBe(2);
  });

  it('answers duplicate for an id redelivered after rehydrate within 5 minutes', async () => {
    const h = createHarness(answer(0), { sessions: { hibernateAfterMs: 1000 } });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'tg-1', text: 'hi' });
    await h.clock.advance(1000);
    expect(h.runtime.stats().liveSessions).toBe(0);
    await h.clock.advance(200_000);
    expect(await chat.send({ id: 'tg-1', text: 'hi' })).toEqual({
      messageId: 'tg-1',
      disposition: 'duplicate',
    });
    await h.settled();
    expect(h.of('message.duplicate').map((event) => event.messageId)).toEqual(['tg-1']);
    expect(h.model.calls).toBe(1);
    await h.close();
  });

  it('stays live while its queue waits for the debounce drain and hibernates once idle and empty', async () => {
    const h = createHarness(answer(10), {
      sessions: { hibernateAfterMs: 100 },
      queue: { debounceMs: 1000 },
    });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'first' });
    expect(await chat.send({ id: 'b', text: 'second' })).toMatchObject({ disposition: 'collected' });
    await h.clock.advance(20);
    expect(h.of('run.ended')).toHaveLength(1);
    await h.clock.advance(900);
    expect(h.runtime.stats().liveSessions).toBe(1);
    expect(chat.status()).toEqual({ state: 'idle', queued: 1 });
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b']);
    await h.clock.advance(80); // t = 1000: the drain is due
    expect(h.of('run.started').map((event) => event.messageIds)).toEqual([['a'], ['b']]);
    await h.clock.advance(20 + 99); // run 2 ends at 1020; 99 ms idle
    expect(h.runtime.stats().liveSessions).toBe(1);
    await h.clock.advance(1);
    expect(h.runtime.stats().liveSessions).toBe(0);
    await h.close();
  });

  it('continues the per-session seq after rehydrate instead of restarting it', async () => {
    const h = createHarness(answer(0), { sessions: { hibernateAfterMs: 50 } });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'one' });
    await h.clock.advance(50);
    expect(h.runtime.stats().liveSessions).toBe(0);
    const before = h.events.length;
    await chat.send({ id: 'b', text: 'two' });
    await h.clock.advance(50);
    expect(h.runtime.stats().liveSessions).toBe(0);
    await chat.send({ id: 'c', text: 'three' });
    await h.clock.advance(0);
    expect(h.events.length).toBeGreaterThan(before + 6);
    expect(h.events.map((event) => event.seq)).toEqual(h.events.map((_, index) => index + 1));
    expect(h.of('run.started').map((event) => event.messageIds)).toEqual([['a'], ['b'], ['c']]);
    await h.close();
  });

  it('runs messages queued before a restart at their stored drain deadline once the session is touched', async () => {
    const { clock, ledger, model, open } = await pendingDrainAcrossRestart();
    await clock.advance(480); // t = 500: the process is "down" for a while
    const second = open(ledger);
    const chat = second.session('telegram:1');
    await chat.configure({}); // hydrates without enqueueing anything
    expect(chat.status()).toEqual({ state: 'idle', queued: 2 });
    await clock.advance(499);
    expect(model.calls).toBe(1);
    await clock.advance(1);
    expect(model.calls).toBe(2);
    expect(model.requests[1]?.messages.at(-1)?.content).toContain('Queued #1\nsecond');
    expect(model.requests[1]?.messages.at(-1)?.content).toContain('Queued #2\nthird');
    const ended = chat.waitForEnd({ timeoutMs: 1000 });
    await clock.advance(20);
    expect(await ended).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(await ledger.listMessages('telegram:1', ['pending'])).toEqual([]);
    const closing = second.close();
    await clock.runAll();
    await closing;
  });

  it('runs the queued messages at once on hydrate when their deadline passed while the runtime was down', async () => {
    const { clock, ledger, model, open } = await pendingDrainAcrossRestart();
    await clock.advance(5000);
    const second = open(ledger);
    const chat = second.session('telegram:1');
    await chat.configure({});
    await clock.advance(0);
    expect(model.calls).toBe(2);
    expect(chat.status()).toMatchObject({ state: 'streaming', queued: 0 });
    const closing = second.close();
    await clock.runAll();
    await closing;
  });
});

/** Runtime A ran `a` while `b` and `c` queued (drain due at t = 1000), then closed at t = 20. */
async function pendingDrainAcrossRestart() {
  const clock = fakeClock({ now: 0 });
  const ledger = createMemoryLedger();
  const model = scriptedModel(answer(10), { clock });
  const ids = sequentialIds(); // shared: run ids must not repeat across the restart
  const open = (shared: Ledger) =>
    createRuntime({
      ledger: shared,
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      queue: { debounceMs: 1000 },
      clock,
      ids,
    });
  const first = open(unclosable(ledger));
  const chat = first.session('telegram:1');
  await chat.send({ id: 'a', text: 'first' });
  await chat.send({ id: 'b', text: 'second' });
  await chat.send({ id: 'c', text: 'third' });
  await clock.advance(20); // run 1 ended at 20; the drain is due at 1000 (1000 ms quiet after b and c)
  expect(model.calls).toBe(1);
  await first.close();
  const pending = await ledger.listMessages('telegram:1', ['pending']);
  expect(pending.map((message) => message.messageId)).toEqual(['b', 'c']);
  expect((await ledger.getSession('telegram:1'))?.snapshot).toMatchObject({
    value: { idle: 'waiting' },
    context: { drainAt: 1000 },
  });
  return { clock, ledger, model, open };
}
