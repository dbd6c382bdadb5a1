import { describe, expect, it } from 'vitest';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { rawRows, statementsDuring as sqlStatementsDuring } from '../support/sqlite-statements.js';
import { isRuntimeError } from 'agentlanes';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import Database from 'better-sqlite3';
import {
  createRowBatches,
  rowsPerStatement,
  type RowBatchKind,
} from '../../src/ledger/sqlite/row-batches.js';
import { message, run, turn } from '../contracts/ledger-fixtures.contract.js';

/** A fresh ledger file, removed after the test. */
const tempPath = (): string => tempLedgerPath('row-batches');

/** The statements run while `work` runs, each as its first 20 characters (whitespace collapsed). */
async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const seen = await sqlStatementsDuring(work);
  return seen.map((sql) => sql.replace(/\s+/g, ' ').slice(0, 20));
}

/** What a promise settled with: 'ok', or the code (or message) of its error. */
function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: unknown) => (isRuntimeError(error) ? error.code : String(error)),
  );
}

describe('the SQLite ledger row batches', () => {
  it('writes the inbox, run and turn rows of a transaction with one statement per table and kind', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    const statements = await statementsDuring(() =>
      Promise.all(
        ['s1', 's2', 's3'].flatMap((key) => [
          ledger.appendMessage(message(key, 'm1', 1)),
          ledger.openRun(run(key, `${key}-r1`)),
          ledger.updateMessages(key, ['m1'], { status: 'consumed', runId: `${key}-r1` }),
          ledger.appendTurns([turn(key, `${key}-r1`, 0), turn(key, `${key}-r1`, 1)]),
          ledger.closeRun(`${key}-r1`, {
            status: 'completed',
            endedAt: 300,
            text: 'done',
            usage: { inputTokens: 1, outputTokens: 2 },
          }),
        ]),
      ),
    );
    // Inserts before updates; the order of the tables within each is the stores'.
    expect(statements.slice(0, 3).sort()).toEqual([
      'INSERT INTO inbox (s',
      'INSERT INTO runs (ru',
      'INSERT INTO turns (s',
    ]);
    expect(statements.slice(3).sort()).toEqual(['UPDATE inbox SET sta', 'UPDATE runs SET stat']);
    expect((await ledger.listMessages('s2')).map((stored) => [stored.status, stored.runId])).toEqual([
      ['consumed', 's2-r1'],
    ]);
    expect((await ledger.getRun('s3-r1'))?.status).toBe('completed');
    expect((await ledger.listTurns('s1')).map((stored) => stored.index)).toEqual([0, 1]);
    await ledger.close();
  });

  it('fails only the write whose row is refused, and commits the batch around it in order', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.appendMessage(message('s1', 'm1', 1));
    const outcomes = await Promise.all(
      [
        ledger.appendMessage(message('s1', 'm2', 2)),
        ledger.appendMessage(message('s1', 'again', 1)),
        ledger.appendMessage(message('s1', 'm3', 3)),
        ledger.openRun(run('s1', 'r1')),
        ledger.openRun(run('s1', 'r1')),
        ledger.closeRun('nowhere', {
          status: 'completed',
          endedAt: 300,
          text: '',
          usage: { inputTokens: 0, outputTokens: 0 },
        }),
        ledger.closeRun('r1', {
          status: 'failed',
          endedAt: 300,
          text: 'partial',
          usage: { inputTokens: 0, outputTokens: 0 },
        }),
      ].map(outcome),
    );
    expect(outcomes).toEqual(['ok', 'invalid_input', 'ok', 'ok', 'invalid_input', 'not_found', 'ok']);
    await ledger.close();
    expect(rawRows(path, 'SELECT ord, message_id FROM inbox ORDER BY ord')).toEqual([
      { ord: 1, message_id: 'm1' },
      { ord: 2, message_id: 'm2' },
      { ord: 3, message_id: 'm3' },
    ]);
    expect(rawRows(path, 'SELECT run_id, status, text FROM runs')).toEqual([
      { run_id: 'r1', status: 'failed', text: 'partial' },
    ]);
  });

  it('writes a write of several rows whole or not at all once its batch failed, keeping the others in order', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const broken = { ...turn('s1', 'r2', 1), content: null as unknown as string };
    const outcomes = await Promise.all(
      [
        ledger.appendTurns([turn('s1', 'r1', 0), turn('s1', 'r1', 1)]),
        ledger.appendTurns([turn('s1', 'r2', 0), broken]),
        ledger.appendTurns([turn('s1', 'r3', 0)]),
      ].map(outcome),
    );
    expect(outcomes[0]).toBe('ok');
    expect(outcomes[1]).toMatch(/NOT NULL/);
    expect(outcomes[2]).toBe('ok');
    expect((await ledger.listTurns('s1')).map((stored) => `${stored.runId}/${stored.index}`)).toEqual([
      'r1/0',
      'r1/1',
      'r3/0',
    ]);
    await ledger.close();
    expect(rawRows(path, 'SELECT run_id, idx FROM turns ORDER BY id')).toEqual([
      { run_id: 'r1', idx: 0 },
      { run_id: 'r1', idx: 1 },
      { run_id: 'r3', idx: 0 },
    ]);
  });

  it('updates the newest record of a message as the calls came, when its id is accepted again between them', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.appendMessage(message('s1', 'm1', 1));
    await Promise.all([
      ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' }),
      ledger.appendMessage(message('s1', 'm1', 2)),
      ledger.updateMessages('s1', ['m1'], { status: 'steered' }),
      ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r2' }),
    ]);
    await ledger.close();
    expect(rawRows(path, 'SELECT ord, status, run_id FROM inbox ORDER BY ord')).toEqual([
      { ord: 1, status: 'consumed', run_id: 'r1' },
      { ord: 2, status: 'consumed', run_id: 'r2' },
    ]);
  });

  it('closes a run opened in the same transaction, and refuses a close called before its opening', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    const close = {
      status: 'completed',
      endedAt: 300,
      text: 'x',
      usage: { inputTokens: 0, outputTokens: 0 },
    } as const;
    const outcomes = await Promise.all(
      [
        ledger.closeRun('r1', close),
        ledger.openRun(run('s1', 'r1')),
        ledger.openRun(run('s1', 'r2')),
        ledger.closeRun('r2', close),
      ].map(outcome),
    );
    expect(outcomes).toEqual(['not_found', 'ok', 'ok', 'ok']);
    expect((await ledger.listRuns('s1')).map((stored) => [stored.runId, stored.status])).toEqual([
      ['r1', 'running'],
      ['r2', 'completed'],
    ]);
    await ledger.close();
  });

  it('writes the buffered rows again before an unbuffered write when its batch is redone after a rollback', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    await ledger.appendTurns([turn('s2', 'r0', 0)]);
    const outcomes = await Promise.all(
      [
        ledger.openRun(run('s1', 'r1')),
        ledger.setRunStatus('r1', 'awaiting_approval'),
        // A write of several statements that fails: the transaction is rolled back and the others run again.
        ledger.forkTranscript({ sessionKey: 's2', parentKey: 's1', turns: 0, at: 1 }),
      ].map(outcome),
    );
    expect(outcomes).toEqual(['ok', 'ok', 'invalid_input']);
    expect((await ledger.getRun('r1'))?.status).toBe('awaiting_approval');
    await ledger.close();
  });

  it('looks at PRAGMA data_version only when the turn cache answers, once per transaction', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    await ledger.appendTurns([turn('s1', 'r1', 0)]);
    expect(await ledger.listTurns('s1', { last: 50 })).toHaveLength(1);
    let answered: number[] = [];
    const statements = await statementsDuring(async () => {
      await ledger.appendMessage(message('s1', 'm1', 1));
      const appended = ledger.appendTurns([turn('s1', 'r1', 1)]);
      const reads = await Promise.all([
        ledger.listTurns('s1', { last: 50 }),
        ledger.listTurns('s1', { last: 1 }),
        ledger.getFork('s1'),
      ]);
      answered = reads.map((read) => (Array.isArray(read) ? read.length : -1));
      await appended;
    });
    expect(answered).toEqual([2, 1, -1]);
    expect(statements.filter((sql) => sql.startsWith('PRAGMA data_version'))).toHaveLength(1);
    await ledger.close();
  });

  it(`splits ${rowsPerStatement * 2 + 1} buffered turns into 3 statements, in order`, async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const count = rowsPerStatement * 2 + 1;
    const statements = await statementsDuring(() =>
      Promise.all(Array.from({ length: count }, (_, index) => ledger.appendTurns([turn('s1', 'r1', index)]))),
    );
    expect(statements.filter((sql) => sql.startsWith('INSERT INTO turns'))).toHaveLength(3);
    await ledger.close();
    const stored = rawRows(path, 'SELECT idx FROM turns ORDER BY id') as { idx: number }[];
    expect(stored.map((row) => row.idx)).toEqual(Array.from({ length: count }, (_, index) => index));
  });
});

/** A database capped at a few pages, in a transaction, with a table `t` a row kind writes one value at a time. */
function cappedDatabase() {
  const db = new Database(':memory:');
  db.pragma('page_size = 1024');
  db.exec('CREATE TABLE t (x BLOB NOT NULL)');
  db.pragma('max_page_count = 8');
  db.exec('BEGIN');
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  const kind: RowBatchKind<Buffer | null> = {
    phase: 'insert',
    writeMany: () => false,
    writeOne: (row) => insert.run(row),
  };
  return { db, kind };
}

describe('createRowBatches, a row that fails', () => {
  it('fails that write alone when the row is refused (a constraint), and writes the others', () => {
    const { db, kind } = cappedDatabase();
    const batches = createRowBatches(db);
    const add = batches.define(kind);
    const failed: string[] = [];
    add(Buffer.alloc(8), (error) => failed.push(`first: ${error.message}`));
    add(null, (error) => failed.push(`second: ${error.message}`));
    add(Buffer.alloc(8), (error) => failed.push(`third: ${error.message}`));
    batches.flush();
    expect(failed).toEqual([expect.stringMatching(/^second: NOT NULL/)]);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
    db.close();
  });

  it('fails the transaction, not the write alone, when the file fails under a row and leaves it open', () => {
    const { db, kind } = cappedDatabase();
    const batches = createRowBatches(db);
    // SQLite may leave the transaction open after an I/O error or a full disk (it rolls back only some statements).
    const ioError = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    const add = batches.define<Buffer | null>({
      ...kind,
      writeOne: (row) => {
        if (row?.length === 2) throw ioError;
        kind.writeOne(row);
      },
    });
    const failed: string[] = [];
    add(Buffer.alloc(8), (error) => failed.push(`first: ${error.message}`));
    add(Buffer.alloc(2), (error) => failed.push(`second: ${error.message}`));
    expect(db.inTransaction).toBe(true);
    // What was written with it (a run's close with its turns) must not commit without it: the batch is lost.
    expect(() => batches.flush()).toThrow(ioError);
    expect(failed).toEqual([]);
    // And it stays lost: its COMMIT fails with the same error.
    expect(() => batches.flush()).toThrow(ioError);
    db.close();
  });

  it('fails the transaction when the file is full and SQLite rolled it back (SQLITE_FULL)', () => {
    const { db, kind } = cappedDatabase();
    const batches = createRowBatches(db);
    const add = batches.define(kind);
    const failed: string[] = [];
    add(Buffer.alloc(8), (error) => failed.push(`small: ${error.message}`));
    add(Buffer.alloc(64 * 1024), (error) => failed.push(`large: ${error.message}`));
    expect(() => batches.flush()).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
    expect(failed).toEqual([]);
    db.close();
  });

  it('does not write a row its kind blocks (a close after a failed turn), failing its write with that error', () => {
    const { db, kind } = cappedDatabase();
    const batches = createRowBatches(db);
    const blocked = new Error('a turn it was tied to failed');
    const add = batches.define<Buffer | null>({
      ...kind,
      blockedBy: (row) => (row?.length === 1 ? blocked : undefined),
    });
    const failed: unknown[] = [];
    add(Buffer.alloc(8), (error) => failed.push(error));
    add(Buffer.alloc(1), (error) => failed.push(error));
    batches.flush();
    expect(failed).toEqual([blocked]);
    expect(db.prepare('SELECT length(x) AS size FROM t').all()).toEqual([{ size: 8 }]);
    db.close();
  });
});
