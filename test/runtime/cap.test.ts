import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type QueueMode } from 'agentlanes';
import { type DropPolicy } from 'agentlanes/queue';
import { createHarness, type Harness } from '../support/runtime-harness.js';

// run_1 streams until t=20; every later run answers at once.
function setup(mode: QueueMode, drop: DropPolicy, cap = 2) {
  const ledger = createMemoryLedger();
  const script = [
    { text: 'one two three', tokenDelayMs: 10 },
    ...Array.from({ length: 5 }, () => ({ text: 'ok' })),
  ];
  const h = createHarness(script, { ledger, queue: { mode, cap, drop } });
  return { h, ledger, chat: h.runtime.session('telegram:1') };
}

const prompts = (h: Harness) => h.model.requests.map((request) => request.messages.at(-1)?.content);
const startedIds = (h: Harness) => h.of('run.started').map((event) => event.messageIds);

describe('QueueSettings cap and drop', () => {
  it("refuses the newcomer with queue_full when the queue is full and drop is 'new'", async () => {
    const { h, ledger, chat } = setup('followup', 'new');
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'one' });
    await chat.send({ id: 'c', text: 'two' });
    expect(await chat.send({ id: 'd', text: 'three' })).toEqual({
      messageId: 'd',
      disposition: 'rejected',
      code: 'queue_full',
    });
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b', 'c']);
    await h.clock.advance(0);
    expect(h.of('message.rejected').map((event) => [event.messageId, event.code])).toEqual([
      ['d', 'queue_full'],
    ]);
    expect(h.of('message.dropped')).toEqual([]);
    await h.clock.advance(2000);
    expect(startedIds(h)).toEqual([['a'], ['b'], ['c']]);
    expect((await ledger.listMessages('telegram:1')).map((record) => record.messageId)).toEqual([
      'a',
      'b',
      'c',
    ]);
    // A refused message was never accepted, so its redelivery is not a duplicate.
    expect(await chat.send({ id: 'd', text: 'three' })).toMatchObject({ disposition: 'started' });
    await h.close();
  });

  it("drops the oldest with a cap_old event when the queue is full and drop is 'old'", async () => {
    const { h, ledger, chat } = setup('followup', 'old');
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'one' });
    await chat.send({ id: 'c', text: 'two' });
    expect(await chat.send({ id: 'd', text: 'three' })).toEqual({
      messageId: 'd',
      disposition: 'queued',
      position: 2,
    });
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['c', 'd']);
    await h.clock.advance(0);
    const [dropped] = h.of('message.dropped');
    expect(dropped).toMatchObject({ messageId: 'b', reason: 'cap_old' });
    expect(dropped).not.toHaveProperty('summary');
    expect(h.of('message.dropped')).toHaveLength(1);
    await h.clock.advance(2000);
    expect(startedIds(h)).toEqual([['a'], ['c'], ['d']]);
    expect(prompts(h)).toEqual(['hi', 'two', 'three']);
    const inbox = await ledger.listMessages('telegram:1');
    expect(inbox.find((record) => record.messageId === 'b')).toMatchObject({ status: 'dropped' });
    await h.close();
  });

  it("keeps a summary and prepends the dropped notice to the next run when drop is 'summarize'", async () => {
    const { h, ledger, chat } = setup('followup', 'summarize');
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'please  check\n\nmy order' });
    await chat.send({ id: 'c', text: 'two' });
    expect(await chat.send({ id: 'd', text: 'three' })).toMatchObject({ disposition: 'queued', position: 2 });
    await h.clock.advance(0);
    expect(
      h.of('message.dropped').map(({ messageId, reason, summary }) => [messageId, reason, summary]),
    ).toEqual([['b', 'cap_summarize', 'please check my order']]);
    await h.clock.advance(2000);
    expect(startedIds(h)).toEqual([['a'], ['c'], ['d']]);
    expect(prompts(h)).toEqual([
      'hi',
      'Dropped 1 message(s) due to cap:\n- please check my order\n\ntwo',
      'three',
    ]);
    const inbox = await ledger.listMessages('telegram:1');
    expect(inbox.find((record) => record.messageId === 'b')).toMatchObject({
      status: 'dropped',
      summary: 'please check my order',
    });
    await h.close();
  });

  it('lists every dropped summary before the collect prompt when several were dropped', async () => {
    const { h, chat } = setup('collect', 'summarize');
    const long = `first line\n${'x'.repeat(300)}`;
    await chat.send({ id: 'a', text: 'hi' });
    for (const [id, text] of [
      ['b', long],
      ['c', 'two'],
      ['d', 'three'],
      ['e', 'four'],
    ] as const) {
      await chat.send({ id, text });
    }
    await h.clock.advance(0);
    const summaries = h.of('message.dropped').map((event) => event.summary);
    const cut = `first line ${'x'.repeat(148)}…`;
    expect(cut).toHaveLength(160);
    expect(summaries).toEqual([cut, 'two']);
    await h.clock.advance(2000);
    expect(startedIds(h)).toEqual([['a'], ['d', 'e']]);
    expect(prompts(h)[1]).toBe(
      `Dropped 2 message(s) due to cap:\n- ${cut}\n- two\n\n` +
        '[Queued messages while agent was busy]\n\n---\nQueued #1\nthree\n\n---\nQueued #2\nfour',
    );
    await h.close();
  });

  it('summarizes the oldest when the 21st message arrives and the settings are the defaults', async () => {
    const h = createHarness([{ text: 'one two', tokenDelayMs: 10 }, { text: 'ok' }]);
    const chat = h.runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'hi' });
    for (let index = 1; index <= 20; index++) await chat.send({ id: `m${index}`, text: `n${index}` });
    await h.clock.advance(0);
    expect(h.of('message.dropped')).toEqual([]);
    expect(await chat.send({ id: 'm21', text: 'n21' })).toEqual({
      messageId: 'm21',
      disposition: 'collected',
      position: 20,
    });
    await h.clock.advance(0);
    expect(
      h.of('message.dropped').map(({ messageId, reason, summary }) => [messageId, reason, summary]),
    ).toEqual([['m1', 'cap_summarize', 'n1']]);
    expect(chat.status().queued).toBe(20);
    await h.close();
  });
});

describe('Session.send dedupe', () => {
  it('answers duplicate and stores nothing when a queued message is delivered again', async () => {
    const { h, ledger, chat } = setup('followup', 'new', 5);
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'one' });
    expect(await chat.send({ id: 'b', text: 'one' })).toEqual({ messageId: 'b', disposition: 'duplicate' });
    expect(await chat.send({ id: 'a', text: 'hi' })).toEqual({ messageId: 'a', disposition: 'duplicate' });
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['b']);
    await h.clock.advance(0);
    expect(h.of('message.duplicate').map((event) => event.messageId)).toEqual(['b', 'a']);
    await h.clock.advance(2000);
    expect(startedIds(h)).toEqual([['a'], ['b']]);
    expect(await ledger.listMessages('telegram:1')).toHaveLength(2);
    await h.close();
  });

  it('answers duplicate and starts no run when the id comes again within 5 minutes', async () => {
    const { h, chat } = setup('followup', 'new');
    await chat.send({ id: 'a', text: 'hi' });
    await h.clock.advance(299_999);
    expect(chat.status()).toEqual({ state: 'idle', queued: 0 });
    expect(await chat.send({ id: 'a', text: 'hi' })).toEqual({ messageId: 'a', disposition: 'duplicate' });
    await h.clock.advance(10_000);
    expect(h.of('run.started')).toHaveLength(1);
    await h.close();
  });

  it('accepts the id again and starts a run when 5 minutes have passed', async () => {
    const { h, chat } = setup('followup', 'new');
    try {
      await chat.send({ id: 'a', text: 'hi' });
      await h.clock.advance(300_000);
      expect(await chat.send({ id: 'a', text: 'hi again' })).toEqual({
        messageId: 'a',
        disposition: 'started',
        runId: 'run_2',
      });
      await h.clock.advance(0);
      expect(h.of('run.started').map((event) => [event.runId, event.at])).toEqual([
        ['run_1', 0],
        ['run_2', 300_000],
      ]);
    } finally {
      await h.close();
    }
  });

  it('never dedupes messages when they carry no id', async () => {
    const { h, chat } = setup('followup', 'new');
    await chat.send({ id: 'a', text: 'hi' });
    expect(await chat.send('same')).toMatchObject({ disposition: 'queued', position: 1 });
    expect(await chat.send('same')).toMatchObject({ disposition: 'queued', position: 2 });
    await h.close();
  });
});

describe('QueueSettings cap with summarize under a flood', () => {
  it('keeps a line for every dropped message when the cap is 1 and two are dropped', async () => {
    const { h, chat } = setup('followup', 'summarize', 1);
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'first dropped' });
    await chat.send({ id: 'c', text: 'second dropped' });
    await chat.send({ id: 'd', text: 'kept' });
    await h.clock.advance(2000);
    expect(startedIds(h)).toEqual([['a'], ['d']]);
    expect(prompts(h)[1]).toBe('Dropped 2 message(s) due to cap:\n- first dropped\n- second dropped\n\nkept');
    await h.close();
  });

  it('keeps the first 20 summary lines and counts the rest when many messages arrive while a run is busy', async () => {
    const { h, chat } = setup('collect', 'summarize', 3);
    await chat.send({ id: 'a', text: 'hi' });
    for (let index = 1; index <= 40; index++) await chat.send({ id: `m${index}`, text: `message ${index}` });
    expect(chat.queue.list().map((item) => item.messageId)).toEqual(['m38', 'm39', 'm40']);
    await h.clock.advance(10_000);
    expect(startedIds(h)).toEqual([['a'], ['m38', 'm39', 'm40']]);
    const prompt = prompts(h)[1] ?? '';
    expect(prompt.split('\n\n')[0]).toBe(
      [
        'Dropped 37 message(s) due to cap:',
        ...Array.from({ length: 20 }, (_, index) => `- message ${index + 1}`),
        '- … and 17 more',
      ].join('\n'),
    );
    // Every drop is still an event and an inbox status.
    expect(h.of('message.dropped')).toHaveLength(37);
    await h.close();
  });
});
