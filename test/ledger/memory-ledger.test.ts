import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { RuntimeEvent } from '../../src/core/events.js';
import { createMemoryLedger, type InboxRecord } from '../../src/ledger/index.js';
import { describeLedgerContract } from '../contracts/ledger.contract.js';

describeLedgerContract('memory', () => createMemoryLedger());

function event(cursor: number): RuntimeEvent {
  return {
    type: 'message.steered',
    sessionKey: 's1',
    seq: cursor,
    cursor,
    at: cursor,
    messageId: `m${cursor}`,
  };
}

const message: InboxRecord = {
  sessionKey: 's1',
  messageId: 'm1',
  order: 1,
  text: 'hi',
  mode: 'collect',
  status: 'pending',
  acceptedAt: 0,
};

describe('createMemoryLedger', () => {
  it('rejects the whole batch with invalid_input when cursors do not strictly increase', async () => {
    const ledger = createMemoryLedger();
    await ledger.appendEvents([event(1), event(2)]);
    const error: unknown = await ledger.appendEvents([event(3), event(3)]).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(await ledger.lastCursor()).toBe(2);
    await expect(ledger.appendEvents([event(2)])).rejects.toThrow(/cursor/);
  });

  it('sees a write from a read called right after it when the write is not awaited first', async () => {
    const ledger = createMemoryLedger();
    const write = ledger.appendMessage(message);
    const read = ledger.listMessages('s1');
    await write;
    expect(await read).toHaveLength(1);
  });

  it('rejects with invalid_input a cursor not above a pruned one when every event was pruned', async () => {
    const ledger = createMemoryLedger();
    await ledger.appendEvents([event(1), event(2)]);
    expect(await ledger.pruneEvents(Number.MAX_SAFE_INTEGER)).toBe(2);
    const error: unknown = await ledger.appendEvents([event(2)]).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(await ledger.readEvents({})).toEqual([]);
  });

  it("keeps a session's highest seq when its events were pruned", async () => {
    const ledger = createMemoryLedger();
    await ledger.appendEvents([event(1), event(2), event(3)]);
    await ledger.pruneEvents(Number.MAX_SAFE_INTEGER);
    expect((await ledger.loadSession('s1')).lastSeq).toBe(3);
  });

  it('leaves a record already handed out unchanged when its message is updated', async () => {
    const ledger = createMemoryLedger();
    await ledger.appendMessage(message);
    const [before] = await ledger.listMessages('s1');
    await ledger.updateMessages('s1', ['m1'], { status: 'consumed' });
    expect(before?.status).toBe('pending');
    expect((await ledger.listMessages('s1'))[0]?.status).toBe('consumed');
  });

  it('gives back a session record exactly as put when its snapshot holds control characters, its key and null text', async () => {
    const ledger = createMemoryLedger();
    const snapshot = {
      status: 'active',
      value: { idle: 'check' },
      historyValue: {},
      context: {
        sessionKey: 'chat:"1"\n',
        queue: [{ messageId: 'chat:"1"\n', text: 'null \u0001\u0002 "queue":[] é 😀', mode: 'followup' }],
        seen: [['m1', 5]],
        nextOrder: 2,
        runEndedAt: null,
      },
      children: {},
    };
    const record = {
      sessionKey: 'chat:"1"\n',
      override: { debounceMs: 500, mode: 'collect' },
      snapshot,
      epoch: 3,
      lastSeq: 17,
      updatedAt: 1234,
      toolPolicy: { deny: ['null'] },
    };
    await ledger.putSession(record);
    expect(await ledger.getSession(record.sessionKey)).toEqual(record);
    expect(await ledger.listSessionKeys({ limit: 10 })).toEqual([
      { sessionKey: record.sessionKey, updatedAt: 1234 },
    ]);
    const { toolPolicy: _omitted, ...withoutPolicy } = record;
    await ledger.putSession({ ...withoutPolicy, snapshot: undefined, override: {} });
    const stored = await ledger.getSession(record.sessionKey);
    expect(stored).toEqual({ ...withoutPolicy, snapshot: undefined, override: {} });
    expect(stored !== undefined && 'toolPolicy' in stored).toBe(false);
  });
});
