import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type RuntimeEvent } from 'agentlanes';
import { fakeClock } from 'agentlanes/testing';
import { createEventBus } from '../../src/events/event-bus.js';
import { streamEvents } from '../../src/events/event-stream.js';

describe('streamEvents with a consumer that stalls', () => {
  it('holds at most its buffer limit in memory and still yields every event in order', async () => {
    const ledger = createMemoryLedger();
    const clock = fakeClock({ now: 0 });
    const bus = createEventBus({ ledger, clock, onError: (error) => expect.fail(String(error)) });
    bus.seek(await ledger.lastCursor());
    const sizes: number[] = [];
    const controller = new AbortController();
    const stream = streamEvents(
      {
        ledger,
        bus,
        clock,
        closed: new Promise(() => undefined),
        onError: () => undefined,
        bufferLimit: 50,
        onBufferSize: (size) => sizes.push(size),
      },
      { signal: controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    const session = { key: 'telegram:1', lastSeq: 0 };
    bus.emit(session, { type: 'message.duplicate', messageId: 'm0' });
    const first = await iterator.next();
    expect(first.value).toMatchObject({ messageId: 'm0' });
    // The consumer stops asking while 5,000 events go by.
    for (let index = 1; index <= 5000; index++)
      bus.emit(session, { type: 'message.duplicate', messageId: `m${index}` });
    await bus.flushed();
    expect(sizes.length).toBeGreaterThan(0);
    const received: RuntimeEvent[] = [];
    for (let index = 1; index <= 5000; index++) {
      const next = await iterator.next();
      received.push(next.value as RuntimeEvent);
    }
    controller.abort();
    await iterator.return?.();
    expect(received.map((event) => (event as { messageId: string }).messageId)).toEqual(
      Array.from({ length: 5000 }, (_, index) => `m${index + 1}`),
    );
    expect(Math.max(...sizes, 0)).toBeLessThanOrEqual(50);
  });
});
