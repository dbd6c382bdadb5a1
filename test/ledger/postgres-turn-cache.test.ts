import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { errorOf, turn } from '../contracts/ledger-fixtures.contract.js';
import { freshPostgresLedger, freshSchema } from '../support/postgres.js';
import { statementProbe } from '../support/postgres-statements.js';

/** The statements every `pg` client of this process sends, while a test runs. */
const probe = statementProbe();
const { sent } = probe;

const opened: PostgresLedger[] = [];
function open(schema: string): PostgresLedger {
  const ledger = freshPostgresLedger({ schema });
  opened.push(ledger);
  return ledger;
}

/**
 * A session's latest turns are answered from memory where this process is their one writer (a run's start reads
 * nothing): by a ledger never fenced, and by the owner of a fence; never by what a rollback undid, nor by what was
 * kept of a session before this process took its fence.
 */
describe('the Postgres ledger, a transcript from memory', () => {
  beforeEach(() => {
    probe.watch();
  });
  afterEach(async () => {
    probe.restore();
    for (const ledger of opened.splice(0)) await ledger.close();
  });

  it('answers the latest turns of a session it read and appended without a statement, as the database holds them', async () => {
    const schema = freshSchema();
    const ledger = open(schema);
    await ledger.appendTurns([turn('s1', 'r1', 0), turn('s1', 'r1', 1)]);
    expect(await ledger.listTurns('s1', { last: 50 })).toEqual([turn('s1', 'r1', 0), turn('s1', 'r1', 1)]);
    await ledger.appendTurns([turn('s1', 'r2', 0)]);
    sent.length = 0;

    const answered = await ledger.listTurns('s1', { last: 2 });

    expect(sent).toEqual([]);
    expect(answered).toEqual([turn('s1', 'r1', 1), turn('s1', 'r2', 0)]);
    expect(await open(schema).listTurns('s1', { last: 2 })).toEqual(answered);
  });

  it('reads the database in a ledger that never wrote turns (another process may write them)', async () => {
    const schema = freshSchema();
    const [writer, reader] = [open(schema), open(schema)];
    await writer.appendTurns([turn('s1', 'r1', 0)]);
    expect(await reader.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);
    await writer.appendTurns([turn('s1', 'r2', 0)]);
    expect(await reader.listTurns('s1')).toEqual([turn('s1', 'r1', 0), turn('s1', 'r2', 0)]);
  });

  it('forgets a turn whose transaction rolled back', async () => {
    const ledger = open(freshSchema());
    await ledger.appendTurns([turn('s1', 'r1', 0)]);
    expect(await ledger.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);

    // A BIGINT column refuses 1.5: the statement fails and the transaction is rolled back.
    await errorOf(ledger.appendTurns([turn('s1', 'r1', 1, { at: 1.5 })]));

    expect(await ledger.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);
  });

  it("forgets a session when it takes the session's fence, and reads the database outside fences once fenced", async () => {
    const schema = freshSchema();
    const [first, second] = [open(schema), open(schema)];
    const held = first.fenced({ sessionKey: 's1', epoch: await first.claimSession('s1', 1) });
    await held.appendTurns([turn('s1', 'r1', 0)]);
    expect(await held.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);
    sent.length = 0;
    expect(await held.listTurns('s1')).toEqual([turn('s1', 'r1', 0)]);
    expect(sent).toEqual([]);

    // Another process takes the session and writes it; the first one takes it back: what it kept of the session
    // before is not taken for the transcript.
    const taken = second.fenced({ sessionKey: 's1', epoch: await second.claimSession('s1', 2) });
    await taken.appendTurns([turn('s1', 'r2', 0)]);
    const back = first.fenced({ sessionKey: 's1', epoch: await first.claimSession('s1', 3) });
    const both = [turn('s1', 'r1', 0), turn('s1', 'r2', 0)];
    expect(await back.listTurns('s1')).toEqual(both);
    expect(await back.listTurns('s1', { last: 1 })).toEqual([turn('s1', 'r2', 0)]);

    // The ledger's own read, outside a fence, goes to the database: another process may hold the session.
    const other = first.fenced({ sessionKey: 's2', epoch: await first.claimSession('s2', 4) });
    await other.appendTurns([turn('s2', 'r3', 0)]);
    expect(await other.listTurns('s2')).toEqual([turn('s2', 'r3', 0)]);
    const away = second.fenced({ sessionKey: 's2', epoch: await second.claimSession('s2', 5) });
    await away.appendTurns([turn('s2', 'r4', 0)]);
    expect(await first.listTurns('s2')).toEqual([turn('s2', 'r3', 0), turn('s2', 'r4', 0)]);
  });
});
