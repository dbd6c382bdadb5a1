import { z } from 'zod';
import { createRuntime, defineTool, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type FakeClock, type ScriptEntry } from 'agentlanes/testing';

/** A runtime that has written a small chat history into a ledger; one session (carol) is still running. */
export interface RecordedHistory {
  readonly clock: FakeClock;
  /** Abort carol's hanging run and close the runtime (the ledger stays open). */
  finish(): Promise<void>;
}

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id',
  input: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => ({ orderId, status: 'shipped' }),
});

/** What the model answers, chosen by the last message of the request so sessions do not depend on call order. */
function answer(last: string | undefined): ScriptEntry {
  switch (last) {
    case 'Where is my order A-1?':
      return { toolCalls: [{ id: 'call-1', name: 'lookup_order', args: { orderId: 'A-1' } }] };
    case 'answer in French please':
      return { text: 'Votre commande A-1 est expédiée.' };
    case 'thanks':
      return { text: 'You are welcome.' };
    case 'also\n\nwhen does it arrive?':
      return { text: 'In two days.' };
    case 'hello':
      return { text: 'Hi Dave.' };
    case 'stop me':
    case 'take your time':
      return { hang: true };
    case undefined:
    default:
      // `last` is free text (an open string). The turn after the tool result: streamed word by word, so a
      // steer lands mid-stream.
      return { text: 'Order A-1 has shipped and arrives in two days.', tokenDelayMs: 10 };
  }
}

/**
 * Drive a real runtime on the fake clock against `ledger` (its `close` is left to the caller): alice asks about an
 * order (a tool call, then a steer mid-stream), thanks the bot and sends a collect burst; bob's run is aborted;
 * dave's message arrives twice (a duplicate); carol's run hangs with a follow-up queued behind it.
 */
export async function recordHistory(ledger: Ledger): Promise<RecordedHistory> {
  const clock = fakeClock({ now: 1_700_000_000_000 });
  const model = scriptedModel(
    (request) => {
      const last = request.messages.at(-1);
      return answer(last?.role === 'user' ? last.content : undefined);
    },
    { clock },
  );
  const runtime = createRuntime({
    ledger: { ...ledger, close: () => Promise.resolve() },
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    tools: [lookupOrder],
    clock,
    ids: sequentialIds(),
    random: () => 0.5,
  });

  const alice = runtime.session('telegram:alice');
  await alice.send({ id: 'a1', text: 'Where is my order A-1?', sender: { id: 'alice' } });
  await clock.advance(25);
  await alice.steer({ id: 'a2', text: 'answer in French please' });
  await clock.advance(1_000);
  await alice.send({ id: 'a3', text: 'thanks' });
  await alice.send({ id: 'a4', text: 'also' });
  await alice.send({ id: 'a5', text: 'when does it arrive?' });
  await clock.advance(2_000);

  const bob = runtime.session('telegram:bob');
  await bob.send({ id: 'b1', text: 'stop me' });
  await clock.advance(500);
  await bob.abort({ reason: 'user sent /stop' });
  await clock.advance(500);

  const dave = runtime.session('telegram:dave');
  await dave.send({ id: 'd1', text: 'hello' });
  await dave.send({ id: 'd1', text: 'hello' });
  await clock.advance(1_000);

  const carol = runtime.session('telegram:carol');
  await carol.send({ id: 'c1', text: 'take your time' });
  await carol.send({ id: 'c2', text: 'are you there?' }, { mode: 'followup' });
  await clock.advance(10);

  return {
    clock,
    async finish() {
      await carol.abort({ reason: 'test over' });
      const closing = runtime.close();
      await clock.runAll();
      await closing;
    },
  };
}
