import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { PostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { errorOf, event, message, run, session, turn } from '../contracts/ledger-fixtures.contract.js';
import { emptyPostgresLedger } from '../support/postgres.js';
import { statementProbe, statementsIn } from '../support/postgres-statements.js';

/** The statements every `pg` client of this process sends, while a test runs. */
const probe = statementProbe();
const { sent } = probe;

/** Statements starting with `fragment`, those sent together in one (a transaction's gathered rows) each counted. */
function count(fragment: string): number {
  return sent.flatMap(statementsIn).filter((text) => text.startsWith(fragment)).length;
}

const close = {
  status: 'completed' as const,
  endedAt: 900,
  text: 'done',
  usage: { inputTokens: 12, outputTokens: 3 },
};

/**
 * The inbox and run writes of one event-loop turn (one transaction of the ledger's queue) go in one `unnest`
 * statement per kind, and each call keeps its own answer; a transcript with no fork is one read.
 */
describe('the Postgres ledger, statements per write and read', () => {
  let ledger: PostgresLedger;
  beforeEach(async () => {
    ledger = await emptyPostgresLedger();
    await ledger.ready();
    probe.watch();
  });
  afterEach(async () => {
    probe.restore();
    await ledger.close();
  });

  it('appends the messages of one turn in one INSERT, and rejects only the one whose order is taken', async () => {
    await ledger.appendMessage(message('s1', 'm0', 2));
    sent.length = 0;
    const outcomes = await Promise.allSettled([
      ledger.appendMessage(message('s1', 'm1', 1)),
      ledger.appendMessage(message('s1', 'm2', 2)),
      ledger.appendMessage(message('s1', 'm3', 3)),
      ledger.appendMessage(message('s2', 'm1', 1)),
    ]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    const refused = (outcomes[1] as PromiseRejectedResult).reason as Error;
    expect(isRuntimeError(refused, 'invalid_input')).toBe(true);
    expect(refused.message).toContain('inbox order 2 of "s1"');
    expect((await ledger.listMessages('s1')).map((record) => record.messageId)).toEqual(['m1', 'm0', 'm3']);
    expect(await ledger.listMessages('s2')).toEqual([message('s2', 'm1', 1)]);

    sent.length = 0;
    await Promise.all([4, 5, 6].map((order) => ledger.appendMessage(message('s1', `m${order}`, order))));
    expect(count('INSERT INTO inbox')).toBe(1);
  });

  it('updates the newest record of each id in one UPDATE, and a second update of one id after the first', async () => {
    await ledger.appendMessage(message('s1', 'm1', 1));
    await ledger.appendMessage(message('s1', 'm2', 2));
    sent.length = 0;
    await Promise.all([
      ledger.appendMessage(message('s1', 'm1', 3)),
      ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' }),
      ledger.updateMessages('s1', ['m2'], { status: 'collected', runId: 'r1' }),
      ledger.updateMessages('s1', ['m1', 'm2'], { status: 'dropped', summary: 'cap' }),
    ]);

    const records = await ledger.listMessages('s1');
    expect(records.map((record) => [record.order, record.status, record.runId, record.summary])).toEqual([
      [1, 'pending', undefined, undefined],
      [2, 'dropped', 'r1', 'cap'],
      [3, 'dropped', 'r1', 'cap'],
    ]);
    // The first two updates together; the third names ids already updated, so it goes after them.
    expect(count('UPDATE inbox')).toBe(2);
    expect(count('INSERT INTO inbox')).toBe(1);
  });

  it('opens and closes the runs of one turn in one statement each, and fails only the close of an unknown run', async () => {
    await Promise.all([ledger.openRun(run('s1', 'r1')), ledger.openRun(run('s2', 'r2'))]);
    expect(count('INSERT INTO runs')).toBe(1);
    sent.length = 0;
    const outcomes = await Promise.allSettled([
      ledger.closeRun('r1', close),
      ledger.closeRun('ghost', close),
      ledger.closeRun('r2', { ...close, text: 'two' }),
    ]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const missing = (outcomes[1] as PromiseRejectedResult).reason as Error;
    expect(isRuntimeError(missing, 'not_found')).toBe(true);
    expect(missing.message).toContain('"ghost"');
    expect(await ledger.getRun('r1')).toEqual({ ...run('s1', 'r1'), ...close });
    expect(await ledger.getRun('r2')).toEqual({ ...run('s2', 'r2'), ...close, text: 'two' });

    sent.length = 0;
    await Promise.all([ledger.openRun(run('s3', 'r3')), ledger.openRun(run('s4', 'r4'))]);
    await Promise.all([ledger.closeRun('r3', close), ledger.closeRun('r4', close)]);
    expect(count('UPDATE runs')).toBe(1);
    const opened = Promise.allSettled([ledger.openRun(run('s5', 'r5')), ledger.openRun(run('s1', 'r1'))]);
    const [fresh, again] = await opened;
    expect(fresh?.status).toBe('fulfilled');
    expect(isRuntimeError((again as PromiseRejectedResult).reason, 'invalid_input')).toBe(true);
  });

  it('reads the transcript of a session that is no fork in one statement, and a fork through its parent', async () => {
    await ledger.appendTurns([1, 2, 3].map((index) => turn('s1', 'r1', index)));
    sent.length = 0;
    expect(await ledger.listTurns('s1')).toEqual([1, 2, 3].map((index) => turn('s1', 'r1', index)));
    expect(await ledger.listTurns('empty')).toEqual([]);
    expect(sent.filter((text) => text.includes('turns')).length).toBe(2);
    // The session's turns are now known in memory (test/ledger/postgres-turn-cache.test.ts): no statement.
    sent.length = 0;
    expect(await ledger.listTurns('s1', { last: 2 })).toEqual([2, 3].map((index) => turn('s1', 'r1', index)));
    expect(sent).toEqual([]);

    await ledger.forkTranscript({ sessionKey: 'f1', parentKey: 's1', turns: 2, at: 300 });
    await ledger.appendTurns([turn('f1', 'r2', 0)]);
    expect(await ledger.listTurns('f1')).toEqual([
      turn('s1', 'r1', 1),
      turn('s1', 'r1', 2),
      turn('f1', 'r2', 0),
    ]);
  });

  it("sends a transaction's writes as one statement with no BEGIN or COMMIT, two kinds on one table with keys apart", async () => {
    await ledger.appendMessage(message('s1', 'm1', 1));
    await ledger.openRun(run('s1', 'r1'));
    sent.length = 0;
    await Promise.all([
      ledger.appendMessage(message('s1', 'm2', 2)),
      ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' }),
      ledger.closeRun('r1', close),
      ledger.openRun(run('s1', 'r2')),
      ledger.appendTurns([turn('s1', 'r1', 0)]),
      ledger.putSession(session('s1')),
      ledger.appendEvents([event(1, 's1', 1)]),
    ]);

    expect(sent).toHaveLength(1);
    expect(
      statementsIn(sent[0] as string)
        .map((text) => /^\w+ (INTO )?\w+/u.exec(text)?.[0])
        .sort(),
    ).toEqual([
      'INSERT INTO events',
      'INSERT INTO inbox',
      'INSERT INTO meta',
      'INSERT INTO runs',
      'INSERT INTO sessions',
      'INSERT INTO turns',
      'UPDATE inbox',
      'UPDATE runs',
    ]);
    expect((await ledger.listMessages('s1')).map((record) => [record.messageId, record.status])).toEqual([
      ['m1', 'consumed'],
      ['m2', 'pending'],
    ]);
    expect(await ledger.getRun('r1')).toEqual({ ...run('s1', 'r1'), ...close });
    expect((await ledger.getRun('r2'))?.status).toBe('running');
    expect(await ledger.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);
    expect(await ledger.getSession('s1')).toEqual(session('s1'));
    expect((await ledger.readEvents({})).map((read) => read.cursor)).toEqual([1]);
  });

  it('answers the close of an unknown run alone in its transaction with its own error, and writes nothing of it', async () => {
    await ledger.openRun(run('s1', 'r1'));
    sent.length = 0;
    const [ghost, events] = await Promise.allSettled([
      ledger.closeRun('ghost', close),
      ledger.appendEvents([event(1, 's1', 1)]),
    ]);
    expect(ghost.status).toBe('rejected');
    const missing = (ghost as PromiseRejectedResult).reason as Error;
    expect(isRuntimeError(missing, 'not_found')).toBe(true);
    expect(missing.message).toContain('"ghost"');
    expect(events.status).toBe('fulfilled');
    // The statement of both failed as one; job by job, in savepoints, each write learned its own answer.
    expect(sent.filter((text) => text === 'BEGIN')).toHaveLength(1);
    expect((await ledger.readEvents({})).map((read) => read.cursor)).toEqual([1]);

    sent.length = 0;
    const alone = (await errorOf(ledger.closeRun('ghost', close))) as Error;
    expect(isRuntimeError(alone, 'not_found')).toBe(true);
    expect(alone.message).toContain('"ghost"');
  });

  it('reads with no transaction of their own when nothing was sent before them', async () => {
    await ledger.appendMessage(message('s1', 'm1', 1));
    sent.length = 0;
    expect(await ledger.listMessages('s1')).toEqual([message('s1', 'm1', 1)]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^SELECT \* FROM inbox/u);
  });

  it('loads a session with nothing paused or steered in one statement', async () => {
    await ledger.appendMessage(message('s1', 'm1', 1));
    await ledger.appendMessage(message('s1', 'm2', 2));
    await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' });
    sent.length = 0;

    const state = await ledger.loadSession('s1');

    expect(state.pending).toEqual([message('s1', 'm2', 2)]);
    expect(state.lastOrder).toBe(2);
    expect(state.recent).toEqual([
      ['m1', 101],
      ['m2', 102],
    ]);
    expect(state.paused).toBeUndefined();
    expect(sent.filter((text) => /\b(inbox|sessions|runs|events)\b/u.test(text))).toHaveLength(1);
  });
});
