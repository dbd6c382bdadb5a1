import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { insertEvents } from '../../src/ledger/postgres/event-writer.js';
import { createPostgresQueue, type PostgresQueue } from '../../src/ledger/postgres/queue.js';
import { freshPostgresLedger, freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

const schema = freshSchema();
let pool: pg.Pool;
let queue: PostgresQueue;

beforeAll(async () => {
  await rawQuery(
    'public',
    `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.notes (id INTEGER PRIMARY KEY, text TEXT)`,
  );
  pool = new pg.Pool({ connectionString: postgresUrl, options: `-c search_path=${schema}`, max: 1 });
  queue = createPostgresQueue({
    connect: () => pool.connect(),
    translate: (error) => (error instanceof Error ? error : new Error(String(error))),
  });
});
afterAll(async () => {
  await queue.idle();
  await pool.end();
});

const insert = (id: number, text: string) =>
  queue.run(async (query) => {
    await query('INSERT INTO notes (id, text) VALUES ($1, $2)', [id, text]);
    return (await query<{ xid: string }>('SELECT txid_current()::text AS xid')).rows[0]?.xid;
  });

const notes = async (): Promise<string[]> =>
  (await rawQuery<{ text: string }>(schema, 'SELECT text FROM notes ORDER BY id')).map((row) => row.text);

describe('the Postgres ledger queue (group commit)', () => {
  it('commits the jobs of one event-loop turn in one transaction when none fails', async () => {
    await rawQuery(schema, 'DELETE FROM notes');
    const xids = await Promise.all([insert(1, 'a'), insert(2, 'b'), insert(3, 'c')]);
    expect(new Set(xids).size).toBe(1);
    expect(await notes()).toEqual(['a', 'b', 'c']);
  });

  it('rejects only the failing job of a batch, keeping none of its statements and all of the others', async () => {
    await rawQuery(schema, 'DELETE FROM notes');
    const failing = queue.run(async (query) => {
      await query('INSERT INTO notes (id, text) VALUES (10, $1)', ['half-written']);
      await query('INSERT INTO notes (id, text) VALUES (10, $1)', ['duplicate key']);
    });
    const outcomes = await Promise.allSettled([insert(1, 'first'), failing, insert(2, 'after')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain('duplicate key');
    expect(await notes()).toEqual(['first', 'after']);
  });

  it('rejects a failing job alone in its batch, writes nothing of it, and runs the next batch on the same connection', async () => {
    await rawQuery(schema, 'DELETE FROM notes');
    await expect(
      queue.run(async (query) => {
        await query('INSERT INTO notes (id, text) VALUES (5, $1)', ['kept?']);
        await query('SELECT * FROM no_such_table');
      }),
    ).rejects.toThrow('no_such_table');
    await insert(6, 'next');
    expect(await notes()).toEqual(['next']);
  });
});

function steered(id: string): RuntimeEvent {
  return { type: 'message.steered', sessionKey: 's1', seq: 1, cursor: 0, at: 1, messageId: id };
}

describe('event appends in one transaction of the queue', () => {
  it('number every batch after the last committed cursor, with no gap, when a job rolled back its own append', async () => {
    const ledgerSchema = freshSchema();
    const ledger = freshPostgresLedger({ schema: ledgerSchema });
    await ledger.ready();
    const eventsPool = new pg.Pool({
      connectionString: postgresUrl,
      options: `-c search_path=${ledgerSchema}`,
      max: 1,
    });
    const events = createPostgresQueue({
      connect: () => eventsPool.connect(),
      translate: (error) => (error instanceof Error ? error : new Error(String(error))),
    });
    const append = (id: string, then?: 'fail') =>
      events.run(async (query) => {
        await insertEvents(query, [steered(id)], new Set(), 'renumber');
        if (then === 'fail') throw new Error(`${id} failed after its append`);
      });
    // One batch: two appends share the transaction's turn; the failing job's append is rolled back with it.
    const outcomes = await Promise.allSettled([append('a'), append('b', 'fail'), append('c'), append('d')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    await append('e');
    const rows = await rawQuery<{ cursor: string; body: string }>(
      ledgerSchema,
      'SELECT cursor::text, body FROM events ORDER BY events.cursor',
    );
    expect(
      rows.map((row) => [Number(row.cursor), (JSON.parse(row.body) as { messageId: string }).messageId]),
    ).toEqual([
      [1, 'a'],
      [2, 'c'],
      [3, 'd'],
      [4, 'e'],
    ]);
    await events.idle();
    await eventsPool.end();
    await ledger.close();
  });
});
