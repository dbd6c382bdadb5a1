import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, createSqliteLedger, defineTool, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';

const ids = sequentialIds();

function start(path: string, script: Script) {
  const clock = fakeClock({ now: 0 });
  const ledger: Ledger = createSqliteLedger({ path });
  const model = scriptedModel(script, { clock });
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk: 'high',
    input: z.object({ orderId: z.string() }),
    execute: () => 'refunded',
  });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    tools: [refund],
    authority: { tools: { admin: { deny: ['refund'] } } },
    clock,
    ids,
  });
  return { runtime, ledger, model, clock };
}

/**
 * An owner's message paused on a refund approval, then a guest's and the owner's messages queued in collect mode;
 * the runtime closes, `between` runs on the file, and a new runtime on it goes on. The queued messages must run
 * apart, each with its own sender's tools.
 */
async function queuedAcrossRestart(between: (path: string) => void): Promise<void> {
  const path = tempLedgerPath('authority');
  const first = start(path, [{ toolCalls: [{ id: 'c1', name: 'refund', args: { orderId: '42' } }] }]);
  const chat = first.runtime.session('telegram:-1');
  await chat.send({ id: 'm0', text: 'refund 42', sender: { id: 'alice', role: 'owner' } });
  expect(await chat.waitForEnd()).toMatchObject({ status: 'paused' });
  await chat.send({ id: 'm1', text: 'me too', sender: { id: 'gus', role: 'guest' } }, { mode: 'collect' });
  await chat.send({ id: 'm2', text: 'and 43', sender: { id: 'alice', role: 'owner' } }, { mode: 'collect' });
  await first.runtime.close();
  await first.ledger.close();
  between(path);

  const second = start(path, [{ text: 'Refunded.' }, { text: 'Not for you.' }, { text: 'And 43.' }]);
  const again = second.runtime.session('telegram:-1');
  await again.waitForEnd();
  await again.approve({ toolCallId: 'c1', decision: 'approve', by: { id: 'ada', role: 'admin' } });
  for (let step = 0; step < 10; step++) await second.clock.advance(1000);
  await again.waitForEnd();
  const runs = await again.runs();
  expect(runs.map((run) => run.messageIds)).toEqual([['m0'], ['m1'], ['m2']]);
  const offered = second.model.requests.map((request) => request.tools.map((tool) => tool.name));
  expect(offered).toEqual([['refund'], [], ['refund']]);
  await second.runtime.close();
  await second.ledger.close();
}

describe('authority across a restart (SQLite ledger)', () => {
  it("keeps a queued guest message's role: after the restart it runs alone and without the owner's tools", async () => {
    await queuedAcrossRestart(() => undefined);
  });

  it('keeps each queued message role from the inbox when the session snapshot did not know them (a crash)', async () => {
    // As after a crash right after the acknowledgements: only the inbox rows know the queued messages.
    await queuedAcrossRestart((path) => {
      const raw = new Database(path);
      raw.exec("UPDATE sessions SET snapshot = NULL WHERE session_key = 'telegram:-1'");
      raw.close();
    });
  });
});
