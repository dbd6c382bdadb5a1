import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { RuntimeEvent } from '../../src/core/events.js';
import type { InboxRecord, Ledger, RunRecord, SessionRecord, TurnRecord } from '../../src/ledger/index.js';

function session(sessionKey: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    sessionKey,
    override: { mode: 'collect', debounceMs: 1000 },
    snapshot: {
      value: 'idle',
      context: { queue: [{ messageId: 'm1', deadline: 5000 }], flags: [true, null] },
    },
    epoch: 1,
    lastSeq: 7,
    updatedAt: 1000,
    ...extra,
  };
}

function message(sessionKey: string, messageId: string, order: number): InboxRecord {
  return {
    sessionKey,
    messageId,
    order,
    text: `text ${messageId}`,
    mode: 'collect',
    status: 'pending',
    acceptedAt: 100 + order,
  };
}

function run(sessionKey: string, runId: string, startedAt = 100): RunRecord {
  return {
    runId,
    sessionKey,
    status: 'running',
    messageIds: ['m1', 'm2'],
    provider: 'scripted',
    model: 'test-model',
    startedAt,
    usage: { inputTokens: 0, outputTokens: 0 },
    text: '',
  };
}

function turn(sessionKey: string, runId: string, index: number, extra: Partial<TurnRecord> = {}): TurnRecord {
  return { sessionKey, runId, index, role: 'assistant', content: `turn ${index}`, at: 200 + index, ...extra };
}

function event(cursor: number, sessionKey: string, seq: number): RuntimeEvent {
  return {
    type: 'assistant.delta',
    sessionKey,
    seq,
    cursor,
    at: 1000 + cursor,
    runId: 'r1',
    delta: `d${cursor}`,
  };
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** Declare the tests every `Ledger` implementation must pass. */
export function describeLedgerContract(
  name: string,
  makeLedger: () => Promise<Ledger> | Ledger,
  cleanup?: () => Promise<void>,
): void {
  describe(`Ledger contract: ${name}`, () => {
    let ledger: Ledger;

    beforeEach(async () => {
      ledger = await makeLedger();
    });

    afterEach(async () => {
      await ledger.close().catch(() => undefined);
      await cleanup?.();
    });

    describe('sessions', () => {
      it('returns undefined when the session was never put', async () => {
        expect(await ledger.getSession('nobody')).toBeUndefined();
      });

      it('round-trips a session when it is put then read', async () => {
        await ledger.putSession(session('s1'));
        expect(await ledger.getSession('s1')).toEqual(session('s1'));
      });

      it('keeps an undefined snapshot undefined when none was taken', async () => {
        await ledger.putSession(session('s1', { snapshot: undefined }));
        expect((await ledger.getSession('s1'))?.snapshot).toBeUndefined();
      });

      it('overwrites the session when it is put again', async () => {
        await ledger.putSession(session('s1'));
        const next = session('s1', { override: {}, snapshot: { value: 'running' }, epoch: 2, lastSeq: 9 });
        await ledger.putSession(next);
        expect(await ledger.getSession('s1')).toEqual(next);
        expect(await ledger.listSessions()).toHaveLength(1);
      });

      it('lists every session when several were put', async () => {
        await ledger.putSession(session('b'));
        await ledger.putSession(session('a', { epoch: 3 }));
        const keys = (await ledger.listSessions()).map((record) => record.sessionKey).sort();
        expect(keys).toEqual(['a', 'b']);
      });

      it('keeps its own copy when the caller mutates the record after putting it', async () => {
        const record = session('s1');
        await ledger.putSession(record);
        (record.snapshot as { value: string }).value = 'mutated';
        (record.override as Record<string, unknown>)['mode'] = 'mutated';
        expect(await ledger.getSession('s1')).toEqual(session('s1'));
      });
    });

    describe('inbox', () => {
      it('lists messages in order when they were appended out of order', async () => {
        await ledger.appendMessage(message('s1', 'm3', 3));
        await ledger.appendMessage(message('s1', 'm1', 1));
        await ledger.appendMessage(message('s1', 'm2', 2));
        expect(await ledger.listMessages('s1')).toEqual([
          message('s1', 'm1', 1),
          message('s1', 'm2', 2),
          message('s1', 'm3', 3),
        ]);
        expect(await ledger.listMessages('nobody')).toEqual([]);
      });

      it('updates status, runId and summary when updateMessages is called', async () => {
        for (const order of [1, 2, 3]) await ledger.appendMessage(message('s1', `m${order}`, order));
        await ledger.updateMessages('s1', ['m1', 'm3', 'unknown'], { status: 'consumed', runId: 'r1' });
        await ledger.updateMessages('s1', ['m2'], { status: 'dropped', summary: 'asked about refunds' });
        const byId = new Map((await ledger.listMessages('s1')).map((record) => [record.messageId, record]));
        expect(byId.get('m1')).toEqual({ ...message('s1', 'm1', 1), status: 'consumed', runId: 'r1' });
        expect(byId.get('m2')).toEqual({
          ...message('s1', 'm2', 2),
          status: 'dropped',
          summary: 'asked about refunds',
        });
        expect(byId.get('m3')?.status).toBe('consumed');
      });

      it('keeps the runId when a later update does not give one', async () => {
        await ledger.appendMessage(message('s1', 'm1', 1));
        await ledger.updateMessages('s1', ['m1'], { status: 'steered', runId: 'r1' });
        await ledger.updateMessages('s1', ['m1'], { status: 'consumed' });
        expect((await ledger.listMessages('s1'))[0]).toMatchObject({ status: 'consumed', runId: 'r1' });
      });

      it('filters by status when statuses are given', async () => {
        for (const order of [1, 2, 3, 4]) await ledger.appendMessage(message('s1', `m${order}`, order));
        await ledger.updateMessages('s1', ['m2'], { status: 'consumed' });
        await ledger.updateMessages('s1', ['m3'], { status: 'cancelled' });
        const ids = async (statuses: Parameters<Ledger['listMessages']>[1]) =>
          (await ledger.listMessages('s1', statuses)).map((record) => record.messageId);
        expect(await ids(['pending'])).toEqual(['m1', 'm4']);
        expect(await ids(['pending', 'cancelled'])).toEqual(['m1', 'm3', 'm4']);
        expect(await ids([])).toEqual([]);
      });

      it('keeps sessions apart when they use the same message ids', async () => {
        await ledger.appendMessage(message('s1', 'm1', 1));
        await ledger.appendMessage(message('s2', 'm1', 1));
        await ledger.updateMessages('s1', ['m1'], { status: 'consumed' });
        expect((await ledger.listMessages('s2'))[0]?.status).toBe('pending');
        expect(await ledger.listMessages('s1')).toHaveLength(1);
      });

      it('rejects with invalid_input when an order is appended twice to a session', async () => {
        await ledger.appendMessage(message('s1', 'm1', 1));
        await ledger.appendMessage(message('s1', 'm3', 3));
        for (const duplicate of [message('s1', 'm2', 1), message('s1', 'm4', 3)]) {
          expect(isRuntimeError(await errorOf(ledger.appendMessage(duplicate)), 'invalid_input')).toBe(true);
        }
        expect((await ledger.listMessages('s1')).map((record) => record.messageId)).toEqual(['m1', 'm3']);
      });

      it('keeps both records and updates the newest when a message id is accepted again', async () => {
        await ledger.appendMessage(message('s1', 'm1', 1));
        await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' });
        await ledger.appendMessage(message('s1', 'm1', 2));
        await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r2' });
        expect((await ledger.listMessages('s1')).map((record) => [record.order, record.runId])).toEqual([
          [1, 'r1'],
          [2, 'r2'],
        ]);
      });

      it('keeps its own copy when the caller mutates the record after appending it', async () => {
        const record = { ...message('s1', 'm1', 1) };
        await ledger.appendMessage(record);
        (record as { text: string }).text = 'mutated';
        expect((await ledger.listMessages('s1'))[0]?.text).toBe('text m1');
      });
    });

    describe('runs', () => {
      it('round-trips an open run and closes it with its outcome', async () => {
        expect(await ledger.getRun('r1')).toBeUndefined();
        await ledger.openRun(run('s1', 'r1'));
        expect(await ledger.getRun('r1')).toEqual(run('s1', 'r1'));
        const close = {
          status: 'failed' as const,
          endedAt: 900,
          text: 'partial',
          usage: { inputTokens: 12, outputTokens: 3 },
          error: { code: 'provider_unavailable' as const, message: 'overloaded' },
        };
        await ledger.closeRun('r1', close);
        expect(await ledger.getRun('r1')).toEqual({ ...run('s1', 'r1'), ...close });
      });

      it('lists only runs still running when listOpenRuns is called', async () => {
        await ledger.openRun(run('s1', 'r1', 100));
        await ledger.openRun(run('s2', 'r2', 200));
        await ledger.openRun(run('s1', 'r3', 300));
        const usage = { inputTokens: 1, outputTokens: 1 };
        await ledger.closeRun('r2', { status: 'completed', endedAt: 400, text: 'done', usage });
        const open = await ledger.listOpenRuns();
        expect(open.map((record) => record.runId).sort()).toEqual(['r1', 'r3']);
        expect(open.every((record) => record.status === 'running')).toBe(true);
      });

      it("lists a session's runs in start order without other sessions' runs", async () => {
        await ledger.openRun(run('s1', 'r1', 100));
        await ledger.openRun(run('s2', 'r2', 200));
        await ledger.openRun(run('s1', 'r3', 300));
        expect((await ledger.listRuns('s1')).map((record) => record.runId)).toEqual(['r1', 'r3']);
        expect(await ledger.listRuns('nobody')).toEqual([]);
      });

      it('rejects with not_found when closing a run that was never opened', async () => {
        const close = {
          status: 'completed' as const,
          endedAt: 1,
          text: '',
          usage: { inputTokens: 0, outputTokens: 0 },
        };
        expect(isRuntimeError(await errorOf(ledger.closeRun('ghost', close)), 'not_found')).toBe(true);
      });

      it('keeps its own copy when the caller mutates the run after opening it', async () => {
        const record = run('s1', 'r1');
        await ledger.openRun(record);
        (record.messageIds as string[]).push('m9');
        (record.usage as { inputTokens: number }).inputTokens = 999;
        expect(await ledger.getRun('r1')).toEqual(run('s1', 'r1'));
      });
    });

    describe('turns', () => {
      it('lists turns in recorded order for the session only when appended in batches', async () => {
        const toolCalls = [{ id: 'c1', name: 'search', args: { q: 'x', nested: [1, 2] } }];
        const first = [
          turn('s1', 'r1', 0, { role: 'user', messageIds: ['m1'] }),
          turn('s1', 'r1', 1, { toolCalls }),
        ];
        const second = [
          turn('s1', 'r1', 2, { role: 'tool', toolCallId: 'c1', tool: 'search', isError: false }),
        ];
        await ledger.appendTurns(first);
        await ledger.appendTurns([turn('s2', 'r2', 0)]);
        await ledger.appendTurns(second);
        expect(await ledger.listTurns('s1')).toEqual([...first, ...second]);
        expect(await ledger.listTurns('s2')).toHaveLength(1);
        expect(await ledger.listTurns('nobody')).toEqual([]);
      });

      it('keeps its own copy when the caller mutates a turn after appending it', async () => {
        const args = { q: 'x' };
        const record = turn('s1', 'r1', 0, { toolCalls: [{ id: 'c1', name: 'search', args }] });
        await ledger.appendTurns([record]);
        args.q = 'mutated';
        const stored = (await ledger.listTurns('s1'))[0];
        expect(stored?.toolCalls?.[0]?.args).toEqual({ q: 'x' });
      });
    });

    describe('events', () => {
      it('reports 0 as the last cursor when no event was appended', async () => {
        expect(await ledger.lastCursor()).toBe(0);
        expect(await ledger.readEvents({})).toEqual([]);
      });

      it('reads events after a cursor, by session and up to a limit when queried', async () => {
        const all = [event(2, 's1', 1), event(4, 's2', 1), event(6, 's1', 2)];
        await ledger.appendEvents(all.slice(0, 2));
        await ledger.appendEvents(all.slice(2));
        expect(await ledger.lastCursor()).toBe(6);
        expect(await ledger.readEvents({})).toEqual(all);
        expect(await ledger.readEvents({ after: 2 })).toEqual(all.slice(1));
        expect(await ledger.readEvents({ after: 3 })).toEqual(all.slice(1));
        expect(await ledger.readEvents({ after: 6 })).toEqual([]);
        expect(await ledger.readEvents({ sessionKey: 's1' })).toEqual([all[0], all[2]]);
        expect(await ledger.readEvents({ sessionKey: 's1', after: 2 })).toEqual([all[2]]);
        expect(await ledger.readEvents({ limit: 2 })).toEqual(all.slice(0, 2));
        expect(await ledger.readEvents({ after: 2, limit: 1 })).toEqual([all[1]]);
        expect(await ledger.readEvents({ sessionKey: 'nobody' })).toEqual([]);
      });

      it('answers every query like a filter over the log when events span sessions', async () => {
        const sessions = ['a', 'b', 'c'];
        const log: RuntimeEvent[] = [];
        const seqs = new Map<string, number>();
        for (let cursor = 1; cursor <= 60; cursor++) {
          const sessionKey = sessions[(cursor * 7) % 3] as string;
          seqs.set(sessionKey, (seqs.get(sessionKey) ?? 0) + 1);
          log.push(event(cursor * 3, sessionKey, seqs.get(sessionKey) ?? 0));
        }
        await ledger.appendEvents(log);
        const query = fc.record(
          {
            after: fc.integer({ min: -1, max: 200 }),
            sessionKey: fc.constantFrom(...sessions),
            limit: fc.nat(70),
          },
          { requiredKeys: [] },
        );
        await fc.assert(
          fc.asyncProperty(query, async (q) => {
            const expected = log
              .filter(
                (e) =>
                  e.cursor > (q.after ?? -Infinity) &&
                  (q.sessionKey === undefined || e.sessionKey === q.sessionKey),
              )
              .slice(0, q.limit ?? Infinity);
            expect(await ledger.readEvents(q)).toEqual(expected);
          }),
          { numRuns: 200 },
        );
      });
    });

    describe('close', () => {
      it('rejects every method with runtime_closed when the ledger is closed', async () => {
        await ledger.close();
        const usage = { inputTokens: 0, outputTokens: 0 };
        const calls: Array<() => Promise<unknown>> = [
          () => ledger.getSession('s1'),
          () => ledger.putSession(session('s1')),
          () => ledger.listSessions(),
          () => ledger.appendMessage(message('s1', 'm1', 1)),
          () => ledger.updateMessages('s1', ['m1'], { status: 'consumed' }),
          () => ledger.listMessages('s1'),
          () => ledger.openRun(run('s1', 'r1')),
          () => ledger.closeRun('r1', { status: 'completed', endedAt: 1, text: '', usage }),
          () => ledger.getRun('r1'),
          () => ledger.listRuns('s1'),
          () => ledger.listOpenRuns(),
          () => ledger.appendTurns([turn('s1', 'r1', 0)]),
          () => ledger.listTurns('s1'),
          () => ledger.appendEvents([event(1, 's1', 1)]),
          () => ledger.readEvents({}),
          () => ledger.lastCursor(),
        ];
        for (const call of calls) expect(isRuntimeError(await errorOf(call()), 'runtime_closed')).toBe(true);
      });

      it('resolves when close is called a second time', async () => {
        await ledger.close();
        await expect(ledger.close()).resolves.toBeUndefined();
      });
    });
  });
}
