import { describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { ledgerSettled } from '../support/settling-ledger.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const ledgerPath = (): string => tempLedgerPath('consumers');

/** A runtime on `path` whose model answers `reply <n>` to the n-th call; ids carry `process` (one per start). */
function open(path: string, process = 'p1') {
  const clock = fakeClock({ now: 0 });
  const ids = sequentialIds();
  const model = scriptedModel((_request, callIndex) => ({ text: `reply ${callIndex}` }), { clock });
  const runtime = createRuntime({
    ledger: { path },
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    clock,
    ids: (prefix) => `${process}-${ids(prefix)}`,
    random: () => 0.5,
  });
  return { runtime, clock };
}

/** Take the events of `stream` until `count` were yielded, then leave the loop (`break`). */
async function take(stream: AsyncIterable<RuntimeEvent>, count: number): Promise<RuntimeEvent[]> {
  const taken: RuntimeEvent[] = [];
  if (count === 0) return taken;
  for await (const event of stream) {
    taken.push(event);
    if (taken.length === count) break;
  }
  return taken;
}

/** Send `text` to `key` and wait for its run to end. */
async function converse(runtime: ReturnType<typeof createRuntime>, key: string, id: string): Promise<void> {
  const chat = runtime.session(key);
  await chat.send({ id, text: 'hello' });
  expect(await chat.waitForEnd()).toMatchObject({ status: 'ended' });
}

describe('runtime.events({ consumer })', () => {
  it('resumes after the last event it processed when the runtime restarts on the same file', async () => {
    const path = ledgerPath();
    const first = open(path);
    await converse(first.runtime, 'telegram:1', 'm1');
    await converse(first.runtime, 'telegram:2', 'm2');
    const blocks = await take(first.runtime.events({ consumer: 'replies', types: ['assistant.block'] }), 2);
    expect(blocks.map((event) => event.type === 'assistant.block' && event.text)).toEqual([
      'reply 0',
      'reply 1',
    ]);
    await first.runtime.close();

    const second = open(path, 'p2');
    await converse(second.runtime, 'telegram:1', 'm3');
    const resumed = await take(second.runtime.events({ consumer: 'replies', types: ['assistant.block'] }), 1);
    // Nothing of the history comes again: only the block of the run after the restart.
    expect(resumed).toMatchObject([{ type: 'assistant.block', sessionKey: 'telegram:1', text: 'reply 0' }]);
    expect((resumed[0] as RuntimeEvent).cursor).toBeGreaterThan((blocks[1] as RuntimeEvent).cursor);
    await second.runtime.close();
  });

  it('counts the event a loop breaks on as processed, and the one it was not given as not', async () => {
    const path = ledgerPath();
    const { runtime } = open(path);
    await converse(runtime, 'telegram:1', 'm1');
    const everything = await collect(runtime);
    expect(everything.length).toBeGreaterThan(4);
    const head = await take(runtime.events({ consumer: 'audit' }), 3);
    const next = await take(runtime.events({ consumer: 'audit' }), 1);
    expect(head.map((event) => event.cursor)).toEqual(everything.slice(0, 3).map((event) => event.cursor));
    expect(next[0]?.cursor).toBe(everything[3]?.cursor);
    await runtime.close();
  });

  it('keeps a session consumer apart per session and from the every-session consumer', async () => {
    const { runtime } = open(ledgerPath());
    await converse(runtime, 'telegram:1', 'm1');
    await converse(runtime, 'telegram:2', 'm2');
    const one = runtime.session('telegram:1');
    const two = runtime.session('telegram:2');
    const firstOfOne = await take(one.events({ consumer: 'replies' }), 2);
    const firstOfTwo = await take(two.events({ consumer: 'replies' }), 1);
    const firstOfAll = await take(runtime.events({ consumer: 'replies' }), 1);
    expect(firstOfOne.every((event) => event.sessionKey === 'telegram:1')).toBe(true);
    expect(firstOfTwo[0]?.sessionKey).toBe('telegram:2');
    expect(firstOfTwo[0]?.seq).toBe(1);
    expect(firstOfAll[0]?.cursor).toBe(1);
    const thirdOfOne = await take(one.events({ consumer: 'replies' }), 1);
    const ofOne = (await collect(runtime)).filter((event) => event.sessionKey === 'telegram:1');
    expect(thirdOfOne[0]?.cursor).toBe(ofOne[2]?.cursor);
    await runtime.close();
  });

  it('starts at the end of the log with after: now, and at its stored position once it has one', async () => {
    const { runtime } = open(ledgerPath());
    await converse(runtime, 'telegram:1', 'm1');
    const controller = new AbortController();
    const seen: RuntimeEvent[] = [];
    const following = (async () => {
      for await (const event of runtime.events({ after: 'now', signal: controller.signal })) {
        seen.push(event);
        if (event.type === 'run.ended') controller.abort();
      }
    })();
    await converse(runtime, 'telegram:1', 'm2');
    await following;
    expect(seen[0]).toMatchObject({ type: 'message.received', messageId: 'm2' });
    await runtime.close();
  });

  it('refuses a second iterator of the same consumer at once, and bad options, with invalid_input', async () => {
    const { runtime } = open(ledgerPath());
    await converse(runtime, 'telegram:1', 'm1');
    const holder = runtime.events({ consumer: 'replies' })[Symbol.asyncIterator]();
    await holder.next();
    const second = runtime.events({ consumer: 'replies' })[Symbol.asyncIterator]();
    await expect(second.next()).rejects.toSatisfy((error) => isRuntimeError(error, 'invalid_input'));
    await holder.return?.();
    // Once the first one left, the name is free again.
    const third = runtime.events({ consumer: 'replies' })[Symbol.asyncIterator]();
    expect((await third.next()).done).toBe(false);
    await third.return?.();
    for (const bad of [
      { consumer: '' },
      { consumer: 'a\u0000b' },
      { types: ['no.such'] },
      { after: -1 },
      { extra: 1 },
    ]) {
      const stream = runtime.events(bad as never)[Symbol.asyncIterator]();
      await expect(stream.next()).rejects.toSatisfy((error) => isRuntimeError(error, 'invalid_input'));
    }
    await runtime.close();
  });
});

/** Every recorded event, read without a consumer: the stream is caught up once the ledger has no read in flight. */
async function collect(runtime: ReturnType<typeof createRuntime>): Promise<RuntimeEvent[]> {
  const controller = new AbortController();
  const events: RuntimeEvent[] = [];
  const last = await runtime.session('telegram:1').waitForEnd();
  expect(last.status).not.toBe('timeout');
  const stream = runtime.events({ signal: controller.signal });
  const iterator = stream[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([iterator.next(), ledgerSettled().then(() => undefined)]);
    if (next === undefined || next.done === true) break;
    events.push(next.value);
  }
  controller.abort();
  await iterator.return?.();
  return events;
}
