import { describe, expect, it } from 'vitest';
import { createHarness } from '../support/runtime-harness.js';

describe('createRuntime', () => {
  it('runs a message end to end and collects the burst that arrived meanwhile into one run', async () => {
    const h = createHarness([{ text: 'Hello there', tokenDelayMs: 10 }, { text: 'Both noted' }]);
    const chat = h.runtime.session('telegram:1');
    expect(await chat.send({ id: 'a', text: 'hi' })).toEqual({
      messageId: 'a',
      disposition: 'started',
      runId: 'run_1',
    });
    expect(await chat.send({ id: 'b', text: 'one' })).toEqual({
      messageId: 'b',
      disposition: 'collected',
      position: 1,
    });
    expect(await chat.send({ id: 'c', text: 'two' })).toEqual({
      messageId: 'c',
      disposition: 'collected',
      position: 2,
    });
    const ended = chat.waitForEnd({ timeoutMs: 1000 });
    await h.clock.advance(10);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { runId: 'run_1', status: 'completed', text: 'Hello there' },
    });
    expect(chat.status()).toEqual({ state: 'idle', queued: 2 });
    await h.clock.advance(1000);
    expect(h.model.requests[1]?.messages.at(-1)).toEqual({
      role: 'user',
      content: '[Queued messages while agent was busy]\n\n---\nQueued #1\none\n\n---\nQueued #2\ntwo',
    });
    expect(h.of('run.ended').map((event) => [event.runId, event.status])).toEqual([
      ['run_1', 'completed'],
      ['run_2', 'completed'],
    ]);
    await h.close();
  });
});
