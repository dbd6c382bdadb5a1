import { describe, expect, it } from 'vitest';
import type { RuntimeOptions } from 'agentlanes';
import type { ScriptEntry } from 'agentlanes/testing';
import { createHarness, type Harness } from '../support/runtime-harness.js';

// run_1 streams five words 100 ms apart: it starts at t=0 and ends at t=400.
const firstRun: ScriptEntry = { text: 'a b c d e', tokenDelayMs: 100 };

function setup(options: Partial<RuntimeOptions> = {}, first: ScriptEntry = firstRun) {
  const h = createHarness([first, { text: 'Collected' }, { text: 'again' }], options);
  return { h, chat: h.runtime.session('telegram:1') };
}

async function advanceTo(h: Harness, at: number): Promise<void> {
  await h.clock.advance(at - h.clock.now());
}

const starts = (h: Harness) => h.of('run.started').map((event) => [event.runId, event.at]);
const endedAt = (h: Harness, runId: string) => h.of('run.ended').find((e) => e.runId === runId)?.at;

describe('QueueSettings debounceMs and maxWaitMs', () => {
  it('starts the next run debounceMs after the last message when that comes before maxWaitMs', async () => {
    const { h, chat } = setup();
    await chat.send({ id: 'a', text: 'hi' });
    await advanceTo(h, 100);
    await chat.send({ id: 'b', text: 'one' });
    await advanceTo(h, 300);
    await chat.send({ id: 'c', text: 'two' });
    await advanceTo(h, 1299);
    expect(endedAt(h, 'run_1')).toBe(400);
    expect(starts(h)).toEqual([['run_1', 0]]);
    await h.clock.advance(1);
    expect(starts(h)).toEqual([
      ['run_1', 0],
      ['run_2', 1300],
    ]);
    expect(h.of('run.started')[1]?.messageIds).toEqual(['b', 'c']);
    await h.close();
  });

  it('pushes the drain back when a message arrives after the run ended and the queue waits', async () => {
    const { h, chat } = setup();
    await chat.send({ id: 'a', text: 'hi' });
    await advanceTo(h, 100);
    await chat.send({ id: 'b', text: 'one' });
    await advanceTo(h, 1000);
    expect(chat.status()).toEqual({ state: 'idle', queued: 1 });
    expect(await chat.send({ id: 'c', text: 'two' })).toEqual({
      messageId: 'c',
      disposition: 'collected',
      position: 2,
    });
    await advanceTo(h, 1999);
    expect(starts(h)).toEqual([['run_1', 0]]);
    await h.clock.advance(1);
    expect(starts(h)).toEqual([
      ['run_1', 0],
      ['run_2', 2000],
    ]);
    await h.close();
  });

  it('drains at runEnded + maxWaitMs when a message arrives every 800 ms with debounce 1000', async () => {
    const { h, chat } = setup({ queue: { debounceMs: 1000, maxWaitMs: 5000 } });
    await chat.send({ id: 'a', text: 'hi' });
    const times = [200, 1000, 1800, 2600, 3400, 4200, 5000];
    for (const [index, at] of times.entries()) {
      await advanceTo(h, at);
      expect(await chat.send({ id: `m${index}`, text: `message ${index}` })).toMatchObject({
        disposition: 'collected',
        position: index + 1,
      });
    }
    await advanceTo(h, 5399);
    expect(endedAt(h, 'run_1')).toBe(400);
    expect(starts(h)).toEqual([['run_1', 0]]);
    await h.clock.advance(1);
    expect(starts(h)).toEqual([
      ['run_1', 0],
      ['run_2', 5400],
    ]);
    expect(h.of('run.started')[1]?.messageIds).toEqual(times.map((_, index) => `m${index}`));
    await h.close();
  });

  it('starts the next run as soon as the run ends when the quiet time already passed during it', async () => {
    const { h, chat } = setup({}, { text: 'slow slow slow slow', tokenDelayMs: 1000 });
    await chat.send({ id: 'a', text: 'hi' });
    await advanceTo(h, 100);
    await chat.send({ id: 'b', text: 'one' });
    await advanceTo(h, 2999);
    expect(starts(h)).toEqual([['run_1', 0]]);
    await h.clock.advance(1);
    expect(starts(h)).toEqual([
      ['run_1', 0],
      ['run_2', 3000],
    ]);
    await h.close();
  });

  it('drains at runEnded + maxWaitMs when maxWaitMs is shorter than debounceMs', async () => {
    const { h, chat } = setup({ queue: { debounceMs: 3000, maxWaitMs: 1000 } });
    await chat.send({ id: 'a', text: 'hi' });
    await advanceTo(h, 300);
    await chat.send({ id: 'b', text: 'one' });
    await advanceTo(h, 1399);
    expect(starts(h)).toEqual([['run_1', 0]]);
    await h.clock.advance(1);
    expect(starts(h)).toEqual([
      ['run_1', 0],
      ['run_2', 1400],
    ]);
    await h.close();
  });

  it('times the drain with the last message settings when messages ask for different ones', async () => {
    const { h, chat } = setup({ queue: { debounceMs: 300, maxWaitMs: 2000 } });
    await chat.send({ id: 'a', text: 'hi' });
    await advanceTo(h, 100);
    await chat.send({ id: 'b', text: 'one' });
    await advanceTo(h, 350);
    // Quiet until 350 + 300 by the runtime settings; this last message asks for 600 ms.
    await chat.send({ id: 'c', text: 'two' }, { debounceMs: 600 });
    await advanceTo(h, 949);
    expect(starts(h)).toEqual([['run_1', 0]]);
    await h.clock.advance(1);
    expect(starts(h).at(-1)).toEqual(['run_2', 950]);
    expect(h.of('run.started')[1]?.messageIds).toEqual(['b', 'c']);
    await h.close();
  });
});

describe("Session.send with mode 'collect'", () => {
  it('numbers the queued messages under one header when several were collected', async () => {
    const { h, chat } = setup();
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'first' });
    await chat.send({ id: 'c', text: 'second line 1\nsecond line 2' });
    await chat.send({ id: 'd', text: 'third' });
    await advanceTo(h, 1000);
    expect(h.model.requests).toHaveLength(2);
    expect(h.model.requests[1]?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'a b c d e' },
      {
        role: 'user',
        content:
          '[Queued messages while agent was busy]\n\n' +
          '---\nQueued #1\nfirst\n\n' +
          '---\nQueued #2\nsecond line 1\nsecond line 2\n\n' +
          '---\nQueued #3\nthird',
      },
    ]);
    expect(h.of('run.ended').map((event) => [event.runId, event.status, event.text])).toEqual([
      ['run_1', 'completed', 'a b c d e'],
      ['run_2', 'completed', 'Collected'],
    ]);
    await h.close();
  });

  it('sends the message text alone when only one message was collected', async () => {
    const { h, chat } = setup();
    await chat.send({ id: 'a', text: 'hi' });
    await chat.send({ id: 'b', text: 'just me' });
    await advanceTo(h, 1000);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'just me' });
    await h.close();
  });
});
