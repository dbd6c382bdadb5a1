import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import type { PostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { delta, errorOf, event } from '../contracts/ledger-fixtures.contract.js';
import { freshPostgresLedger, freshSchema, rawQuery } from '../support/postgres.js';

const opened: PostgresLedger[] = [];
afterEach(async () => {
  for (const ledger of opened.splice(0)) await ledger.close();
});

function open(schema: string): PostgresLedger {
  const ledger = freshPostgresLedger({ schema });
  opened.push(ledger);
  return ledger;
}

describe('PostgresLedger events (cursor order is commit order)', () => {
  it('refuses a cursor at or below one another ledger committed, writing nothing', async () => {
    const schema = freshSchema();
    const [first, second] = [open(schema), open(schema)];
    await first.appendEvents([event(5, 's1', 1)]);
    const refused = await errorOf(second.appendEvents([event(3, 's2', 1), event(6, 's2', 2)]));
    expect(isRuntimeError(refused, 'invalid_input')).toBe(true);
    expect((await first.readEvents({})).map((read) => read.cursor)).toEqual([5]);
    await second.appendEvents([event(7, 's2', 1)]);
    expect((await first.readEvents({})).map((read) => read.cursor)).toEqual([5, 7]);
  });

  it('keeps refusing a cursor below the highest one once every event was pruned', async () => {
    const schema = freshSchema();
    const [first, second] = [open(schema), open(schema)];
    await first.appendEvents([event(4, 's1', 1, 10)]);
    expect(await first.pruneEvents(100)).toBe(1);
    expect(isRuntimeError(await errorOf(second.appendEvents([event(2, 's1', 2)])), 'invalid_input')).toBe(
      true,
    );
    expect(await second.lastCursor()).toBe(4);
  });

  it("takes the log's end from its rows when the end it keeps lags them (a log written before it was kept)", async () => {
    const schema = freshSchema();
    const [first, second] = [open(schema), open(schema)];
    await first.appendEvents([event(1, 's1', 1), event(2, 's1', 2), event(3, 's1', 3)]);
    await rawQuery(schema, "UPDATE meta SET value = '1' WHERE key = 'last_cursor'");
    expect(isRuntimeError(await errorOf(second.appendEvents([event(3, 's2', 1)])), 'invalid_input')).toBe(
      true,
    );
    await rawQuery(schema, "DELETE FROM meta WHERE key = 'last_cursor'");
    expect(isRuntimeError(await errorOf(second.appendEvents([event(2, 's2', 1)])), 'invalid_input')).toBe(
      true,
    );
    await second.appendEvents([event(4, 's2', 1)]);
    const end = await rawQuery<{ value: string }>(schema, "SELECT value FROM meta WHERE key = 'last_cursor'");
    expect(end.map((row) => row.value)).toEqual(['4']);
    expect((await first.readEvents({})).map((read) => read.cursor)).toEqual([1, 2, 3, 4]);
  });

  it("writes a run's buffered deltas before any later event, another run's delta too, so rows go in cursor order", async () => {
    const schema = freshSchema();
    const ledger = open(schema);
    await Promise.all([
      ledger.appendEvents([delta(1, 's1', 1, 'r1', 'He'), delta(2, 's1', 2, 'r1', 'llo')]),
      ledger.appendEvents([delta(3, 's2', 1, 'r2', 'Hi')]),
      ledger.appendEvents([delta(4, 's1', 3, 'r1', '!')]),
      ledger.appendEvents([event(5, 's3', 1)]),
    ]);
    const rows = await rawQuery<{ cursor: number; type: string }>(
      schema,
      'SELECT cursor::int AS cursor, type FROM events ORDER BY cursor',
    );
    // Two deltas of r1 coalesced into one row (cursor 2); nothing merged across r2's delta.
    expect(rows.map((row) => row.cursor)).toEqual([2, 3, 4, 5]);
    expect(await ledger.runText('r1')).toBe('Hello!');
    expect(await ledger.runText('r2')).toBe('Hi');
  });
});
