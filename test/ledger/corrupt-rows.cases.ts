import { describe, expect, it } from 'vitest';
import { isRuntimeError, type RuntimeError, type RuntimeEvent } from 'agentlanes';
import type { Ledger } from '../../src/ledger/contract/ledger.js';
import { message, run } from '../contracts/ledger-fixtures.contract.js';

/** Write with a ledger, damage its rows behind its back with these statements, reopen it and listen for reports. */
export type Corrupted = (
  write: (ledger: Ledger) => Promise<void>,
  damage: string[],
) => Promise<{ ledger: Ledger; reports: RuntimeError[] }>;

/** The corrupt-row cases every SQL ledger answers the same way: the same damage, read the same way. */
export function describeCorruptRows(name: string, corrupted: Corrupted): void {
  function event(cursor: number, sessionKey: string, fields: Record<string, unknown>): RuntimeEvent {
    return { sessionKey, seq: cursor, cursor, at: cursor, ...fields } as unknown as RuntimeEvent;
  }

  const threeEvents = (ledger: Ledger) =>
    ledger.appendEvents([
      event(1, 'chat:a', { type: 'message.queued', messageId: 'm1', position: 1 }),
      event(2, 'chat:b', { type: 'message.queued', messageId: 'm2', position: 1 }),
      event(3, 'chat:a', { type: 'message.steered', messageId: 'm3' }),
    ]);

  async function rejection(promise: Promise<unknown>): Promise<RuntimeError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!isRuntimeError(error)) throw new Error(`expected a RuntimeError, got ${String(error)}`);
    return error;
  }

  describe(`${name}.readEvents (corrupt rows)`, () => {
    it.each([
      ['a body that is not JSON', "UPDATE events SET body = '{' WHERE cursor = 2", 'not valid JSON'],
      [
        'a body of the wrong shape',
        `UPDATE events SET body = '{"messageId":"m2","position":"first"}' WHERE cursor = 2`,
        'position',
      ],
      ['an unknown type', "UPDATE events SET type = 'message.vanished' WHERE cursor = 2", 'unknown type'],
    ])('puts a ledger.corrupt marker in place of %s and reads on', async (_case, damage, problem) => {
      const { ledger, reports } = await corrupted(threeEvents, [damage]);
      const events = await ledger.readEvents({});
      expect(events.map((read) => [read.type, read.cursor, read.seq, read.sessionKey])).toEqual([
        ['message.queued', 1, 1, 'chat:a'],
        ['ledger.corrupt', 2, 2, 'chat:b'],
        ['message.steered', 3, 3, 'chat:a'],
      ]);
      expect(events[1]).toMatchObject({ table: 'events', row: 'cursor 2' });
      expect((events[1] as { message: string }).message).toContain(problem);
      // Read again: the marker again, the report only once.
      expect((await ledger.readEvents({ sessionKey: 'chat:b' })).map((read) => read.type)).toEqual([
        'ledger.corrupt',
      ]);
      expect(reports.map((report) => [report.code, report.details])).toEqual([
        ['ledger_corrupt', { table: 'events', row: 'cursor 2', sessionKey: 'chat:b' }],
      ]);
    });

    it('gives an assistant.block recorded before block ids the id the runtime would give it', async () => {
      const { ledger, reports } = await corrupted(
        (first) =>
          first.appendEvents([
            event(1, 'chat:a', {
              type: 'assistant.block',
              runId: 'r1',
              index: 0,
              blockId: 'r1:0',
              text: 'Hi',
            }),
          ]),
        [`UPDATE events SET body = '{"index":0,"text":"Hi"}'`],
      );
      expect(await ledger.readEvents({})).toEqual([
        {
          type: 'assistant.block',
          sessionKey: 'chat:a',
          seq: 1,
          cursor: 1,
          at: 1,
          runId: 'r1',
          index: 0,
          blockId: 'r1:0',
          text: 'Hi',
        },
      ]);
      expect(reports).toEqual([]);
    });

    it('skips a delta without text when assembling a run text, and reports it', async () => {
      const { ledger, reports } = await corrupted(
        async (first) => {
          await first.appendEvents([
            event(1, 'chat:a', { type: 'assistant.delta', runId: 'r1', delta: 'Hello' }),
          ]);
          await first.appendEvents([
            event(2, 'chat:a', { type: 'assistant.delta', runId: 'r1', delta: ' there' }),
          ]);
        },
        [`UPDATE events SET body = '{"delta":5}' WHERE cursor = 2`],
      );
      expect(await ledger.runText('r1')).toBe('Hello');
      expect(reports.map((report) => report.details?.row)).toEqual(['cursor 2']);
    });
  });

  describe(`${name}.loadSession (corrupt rows)`, () => {
    const twoSessions = async (ledger: Ledger) => {
      await ledger.appendMessage(message('chat:good', 'g1', 1));
      await ledger.appendMessage(message('chat:bad', 'b1', 1));
      await ledger.putSession({
        sessionKey: 'chat:good',
        override: {},
        snapshot: undefined,
        epoch: 1,
        lastSeq: 0,
        updatedAt: 0,
      });
      await ledger.putSession({
        sessionKey: 'chat:bad',
        override: {},
        snapshot: undefined,
        epoch: 1,
        lastSeq: 0,
        updatedAt: 0,
      });
    };

    it('fails only the session whose pending message has an unknown status, and lists it to recover', async () => {
      const { ledger, reports } = await corrupted(twoSessions, [
        "UPDATE inbox SET status = 'pendng' WHERE session_key = 'chat:bad'",
      ]);
      const error = await rejection(ledger.loadSession('chat:bad'));
      expect(error.code).toBe('ledger_corrupt');
      expect(error.details).toEqual({ table: 'inbox', row: '("chat:bad", 1)', sessionKey: 'chat:bad' });
      expect(error.message).toContain('pendng');
      expect((await ledger.loadSession('chat:good')).pending.map((record) => record.messageId)).toEqual([
        'g1',
      ]);
      expect((await ledger.listSessionsWithPending()).sort()).toEqual(['chat:bad', 'chat:good']);
      expect(reports.map((report) => report.details?.table)).toEqual(['inbox']);
    });

    it.each([
      [
        'an override that is not an object',
        "UPDATE sessions SET override = '[1]' WHERE session_key = 'chat:bad'",
        'override',
      ],
      [
        'a snapshot that is not an object',
        "UPDATE sessions SET snapshot = '7' WHERE session_key = 'chat:bad'",
        'snapshot',
      ],
    ])('fails only the session with %s', async (_case, damage, column) => {
      const { ledger } = await corrupted(twoSessions, [damage]);
      const error = await rejection(ledger.loadSession('chat:bad'));
      expect(error.code).toBe('ledger_corrupt');
      expect(error.details).toEqual({ table: 'sessions', row: '"chat:bad"', sessionKey: 'chat:bad' });
      expect(error.message).toContain(column);
      expect((await ledger.loadSession('chat:good')).record?.sessionKey).toBe('chat:good');
    });

    it.each([
      [
        'a pending message of an unknown status',
        "UPDATE inbox SET status = 'pendng' WHERE session_key = 'chat:bad'",
      ],
      [
        'an override that is not an object',
        "UPDATE sessions SET override = '[1]' WHERE session_key = 'chat:bad'",
      ],
      [
        'a paused run whose message ids are not JSON',
        "UPDATE runs SET message_ids = 'oops' WHERE run_id = 'r1'",
      ],
    ])('fails only the session with %s among three loaded together', async (_case, damage) => {
      const { ledger } = await corrupted(
        async (first) => {
          await twoSessions(first);
          await first.openRun({ ...run('chat:bad', 'r1'), status: 'awaiting_approval' });
          await first.appendMessage(message('chat:other', 'o1', 1));
        },
        [damage],
      );
      const single = await rejection(ledger.loadSession('chat:bad'));
      if (ledger.loadSessions === undefined) throw new Error('no loadSessions');
      const loads = await ledger.loadSessions(['chat:good', 'chat:bad', 'chat:other']);
      expect(loads.map((load) => [load.sessionKey, 'error' in load ? load.error.code : 'loaded'])).toEqual([
        ['chat:good', 'loaded'],
        ['chat:bad', 'ledger_corrupt'],
        ['chat:other', 'loaded'],
      ]);
      const bad = loads[1];
      expect(bad !== undefined && 'error' in bad ? [bad.error.message, bad.error.details] : []).toEqual([
        single.message,
        single.details,
      ]);
      const pendingOf = (load: (typeof loads)[number] | undefined) =>
        load !== undefined && 'state' in load ? load.state.pending.map((record) => record.messageId) : [];
      expect([pendingOf(loads[0]), pendingOf(loads[2])]).toEqual([['g1'], ['o1']]);
    });
  });

  describe('SqliteLedger lists across sessions (corrupt rows)', () => {
    it('skips an open run with an unknown status and reports it once, serving the other runs', async () => {
      const { ledger, reports } = await corrupted(
        async (first) => {
          await first.openRun(run('chat:a', 'r1'));
          await first.openRun(run('chat:b', 'r2'));
        },
        ["UPDATE runs SET message_ids = 'oops' WHERE run_id = 'r1'"],
      );
      expect((await ledger.listOpenRuns()).map((record) => record.runId)).toEqual(['r2']);
      expect((await ledger.listOpenRuns()).map((record) => record.runId)).toEqual(['r2']);
      expect(reports.map((report) => report.details)).toEqual([
        { table: 'runs', row: '"r1"', sessionKey: 'chat:a' },
      ]);
    });

    it('starts a profile whose stored state is not JSON afresh, keeping the others', async () => {
      const { ledger, reports } = await corrupted(
        async (first) => {
          await first.saveProfileState('p1', { failures: 1 }, 1);
          await first.saveProfileState('p2', { failures: 2 }, 1);
        },
        ["UPDATE auth_profiles SET state = '{' WHERE profile_id = 'p1'"],
      );
      expect([...(await ledger.loadProfileStates())]).toEqual([['p2', { failures: 2 }]]);
      expect(reports.map((report) => report.details)).toEqual([{ table: 'auth_profiles', row: '"p1"' }]);
    });
  });
}
