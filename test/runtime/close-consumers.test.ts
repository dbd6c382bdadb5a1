import { describe, expect, it } from 'vitest';
import {
  createRuntime,
  createSqliteLedger,
  isRuntimeError,
  type Runtime,
  type RuntimeEvent,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** A runtime on the SQLite file at `path` whose model answers `reply <n>` to the n-th call. */
function open(path: string, process: string) {
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

/** Let real event-loop turns pass (a few writes commit, a few events flow). */
async function turns(count = 20): Promise<void> {
  for (let index = 0; index < count; index++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Every event recorded in the ledger at `path`, as a replay hands them out. */
async function recorded(path: string): Promise<RuntimeEvent[]> {
  const ledger = createSqliteLedger({ path });
  try {
    return await ledger.readEvents({});
  } finally {
    await ledger.close();
  }
}

/** What a replay must keep of events: the non-delta events' cursors, and each run's streamed text. */
function summary(events: readonly RuntimeEvent[]) {
  const text: Record<string, string> = {};
  const others: number[] = [];
  for (const event of events) {
    if (event.type === 'assistant.delta')
      text[event.runId ?? ''] = (text[event.runId ?? ''] ?? '') + event.delta;
    else others.push(event.cursor);
  }
  return { text, others };
}

/** Follow the consumer `replies` on `runtime`, handling each event with `handle`; what it saw, and when. */
function follow(runtime: Runtime, handle: (event: RuntimeEvent) => Promise<void>) {
  const seen: { event: RuntimeEvent; closing: boolean }[] = [];
  const state = { closing: false, error: undefined as unknown };
  const loop = (async () => {
    try {
      for await (const event of runtime.events({ consumer: 'replies' })) {
        seen.push({ event, closing: state.closing });
        await handle(event);
      }
    } catch (error) {
      state.error = error;
    }
  })();
  return { seen, state, loop };
}

describe('runtime.close() with a durable consumer loop', () => {
  it('yields nothing once close began, waits for the event being handled and stores its position', async () => {
    const path = tempLedgerPath('close-consumers');
    const first = open(path, 'p1');
    const handling = createDeferred<void>();
    const release = createDeferred<void>();
    const consumer = follow(first.runtime, async (event) => {
      if (event.type !== 'message.received') return;
      handling.resolve();
      await release.promise;
    });
    // Three runs start; the loop is inside its handler for the first message while they stream.
    await Promise.all(
      ['a', 'b', 'c'].map((name) => first.runtime.session(`chat:${name}`).send({ id: name, text: 'hi' })),
    );
    await handling.promise;
    const closing = first.runtime.close();
    consumer.state.closing = true;
    let closed = false;
    void closing.then(() => (closed = true));
    await turns();
    // close() waits for the handler (its runs settle meanwhile, emitting events the loop must not get).
    expect(closed).toBe(false);
    release.resolve();
    await closing;
    await consumer.loop;
    expect(consumer.state.error).toBeUndefined();
    expect(consumer.seen.filter((entry) => entry.closing)).toEqual([]);
    const handled = consumer.seen.map((entry) => entry.event);
    const all = await recorded(path);

    // The next start delivers everything after the handled event, once.
    const second = open(path, 'p2');
    const resumed: RuntimeEvent[] = [];
    const last = (all.at(-1) as RuntimeEvent).cursor;
    if ((handled.at(-1) as RuntimeEvent).cursor < last) {
      for await (const event of second.runtime.events({ consumer: 'replies' })) {
        resumed.push(event);
        if (event.cursor >= last) break;
      }
    }
    await second.runtime.close();
    expect(resumed.length).toBeGreaterThan(0);
    expect(summary([...handled, ...resumed])).toEqual(summary(all));
  });

  it('refuses a position committed after close with runtime_closed, and delivers that event again', async () => {
    const path = tempLedgerPath('close-consumers-late');
    const first = open(path, 'p1');
    const handling = createDeferred<void>();
    const release = createDeferred<void>();
    const consumer = follow(first.runtime, async (event) => {
      if (event.type !== 'message.received') return;
      handling.resolve();
      await release.promise;
    });
    await first.runtime.session('chat:a').send({ id: 'a', text: 'hi' });
    await handling.promise;
    const handledCursor = (consumer.seen.at(-1) as { event: RuntimeEvent }).event.cursor;
    // The handler outlives close's timeout: close goes on without it and releases the ledger.
    const closing = first.runtime.close({ timeoutMs: 1000 });
    await turns();
    await first.clock.advance(1000);
    await closing;
    release.resolve();
    await consumer.loop;
    expect(isRuntimeError(consumer.state.error, 'runtime_closed')).toBe(true);
    expect((consumer.state.error as Error).message).toContain('consumer "replies"');
    expect((consumer.state.error as Error).message).toContain(`cursor ${handledCursor}`);

    const second = open(path, 'p2');
    const again: RuntimeEvent[] = [];
    for await (const event of second.runtime.events({ consumer: 'replies' })) {
      again.push(event);
      break;
    }
    await second.runtime.close();
    expect(again.map((event) => event.cursor)).toEqual([handledCursor]);
  });
});
