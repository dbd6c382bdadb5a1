import { describe, expect, it } from 'vitest';
import type { ScriptEntry } from 'agentlanes/testing';
import { startOnFile } from '../support/file-runtime.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/**
 * A SQLite file holding session "chat:1" hibernated after one run (message "a"), and a second runtime on it, whose
 * model gives `reply` ("done" by default).
 */
async function hibernated(
  queue?: { mode: 'collect' | 'reject' | 'steer' | 'interrupt' },
  reply?: ScriptEntry,
) {
  const path = tempLedgerPath('cold');
  const first = startOnFile(path);
  const chat = first.runtime.session('chat:1');
  if (queue !== undefined) await chat.configure(queue);
  await chat.send({ id: 'a', text: 'first' });
  await chat.waitForEnd();
  await first.close();
  return startOnFile(path, reply);
}

describe('send() to a hibernated session', () => {
  it('answers started with the run id that status() and waitForEnd() then see, and runs the message once', async () => {
    const second = await hibernated();
    const chat = second.runtime.session('chat:1');
    const sent = await chat.send({ id: 'b', text: 'again' });
    expect(sent).toEqual({ messageId: 'b', disposition: 'started', runId: sent.runId });
    expect(chat.status()).toMatchObject({ runId: sent.runId, queued: 0 });
    const ended = await chat.waitForEnd();
    expect(ended).toMatchObject({ status: 'ended', run: { runId: sent.runId, messageIds: ['b'] } });
    const asked = (await chat.transcript()).filter((turn) => JSON.stringify(turn).includes('again'));
    expect(asked).toHaveLength(1);
    expect(second.started(0)).toBe(2);
    await second.close();
  });

  it('answers duplicate for a message id accepted before it hibernated, and starts no run', async () => {
    const second = await hibernated();
    const chat = second.runtime.session('chat:1');
    expect(await chat.send({ id: 'a', text: 'first' })).toEqual({ messageId: 'a', disposition: 'duplicate' });
    expect(chat.status()).toEqual({ state: 'idle', queued: 0 });
    expect(second.model.requests).toHaveLength(0);
    await second.close();
  });

  it('queues a second message sent in the same stretch behind the run the first one started', async () => {
    // The run goes on until the runtime closes: the second message meets it running, however fast runs end.
    const second = await hibernated(undefined, { hang: true });
    const chat = second.runtime.session('chat:1');
    const [one, two] = await Promise.all([
      chat.send({ id: 'b', text: 'one' }),
      chat.send({ id: 'c', text: 'two' }),
    ]);
    expect(one).toMatchObject({ disposition: 'started' });
    expect(two).toEqual({ messageId: 'c', disposition: 'queued', position: 1 });
    expect(chat.status()).toMatchObject({ runId: one.runId, queued: 1 });
    await second.close();
  });

  it.each(['collect', 'reject', 'steer', 'interrupt'] as const)(
    'starts a run in %s mode, as it does on a live idle session',
    async (mode) => {
      const second = await hibernated({ mode });
      const chat = second.runtime.session('chat:1');
      const sent = await chat.send({ id: 'b', text: 'again' });
      expect(sent).toMatchObject({ disposition: 'started' });
      await expect(chat.waitForEnd()).resolves.toMatchObject({ run: { runId: sent.runId } });
      await second.close();
    },
  );
});
