import { describe, expect, it } from 'vitest';
import { createMemoryLedger } from 'agentlanes';
import { fakeClock } from 'agentlanes/testing';
import { isSettledWrite, settledWrite } from '../../src/core/settled-write.js';
import { createEventBus } from '../../src/events/event-bus.js';

describe('settledWrite', () => {
  it('answers a rejection handler with itself, and behaves as a fulfilled promise otherwise', async () => {
    const never = (): never => expect.fail('a settled write never rejects');
    expect(settledWrite.then(undefined, never)).toBe(settledWrite);
    expect(settledWrite.catch(never)).toBe(settledWrite);
    expect(settledWrite).toBeInstanceOf(Promise);
    expect(await settledWrite).toBeUndefined();
    expect(await settledWrite.then(() => 'next')).toBe('next');
    expect(await Promise.all([settledWrite, settledWrite])).toEqual([undefined, undefined]);
    expect(await Promise.allSettled([settledWrite])).toEqual([{ status: 'fulfilled', value: undefined }]);
    let finished = false;
    await settledWrite.finally(() => (finished = true));
    expect(finished).toBe(true);
    expect(isSettledWrite(settledWrite)).toBe(true);
    expect(isSettledWrite(Promise.resolve())).toBe(false);
  });

  it('is what the memory ledger answers a write with, and a failed write still rejects', async () => {
    const ledger = createMemoryLedger();
    const write = ledger.appendMessage({
      sessionKey: 'chat:1',
      messageId: 'm1',
      order: 1,
      text: 'hello',
      status: 'pending',
      mode: 'followup',
      acceptedAt: 0,
    });
    expect(isSettledWrite(write)).toBe(true);
    await ledger.close();
    await expect(ledger.appendEvents([])).rejects.toMatchObject({ code: 'runtime_closed' });
  });
});

describe('the event bus stamping events', () => {
  it('stamps each emit once: an input emitted twice becomes two events, the first left as it was', async () => {
    const ledger = createMemoryLedger();
    const bus = createEventBus({
      ledger,
      clock: fakeClock({ now: 5 }),
      onError: (e) => expect.fail(String(e)),
    });
    bus.seek(await ledger.lastCursor());
    const session = { key: 'chat:1', lastSeq: 0 };
    const input = { type: 'message.duplicate', messageId: 'm1' } as const;
    const first = bus.emit(session, input);
    const second = bus.emit(session, input);
    expect(first).toEqual({ ...input, sessionKey: 'chat:1', seq: 1, cursor: 1, at: 5 });
    expect(second).toEqual({ ...input, sessionKey: 'chat:1', seq: 2, cursor: 2, at: 5 });
    expect(second).not.toBe(first);
    const frozen = bus.emit(session, Object.freeze({ type: 'message.duplicate', messageId: 'm2' } as const));
    expect(frozen).toMatchObject({ messageId: 'm2', seq: 3, cursor: 3 });
    expect(await ledger.readEvents({})).toEqual([first, second, frozen]);
  });
});
