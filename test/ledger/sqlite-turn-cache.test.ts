import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { statementsDuring } from '../support/sqlite-statements.js';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { turn } from '../contracts/ledger-fixtures.contract.js';

/** A fresh ledger file, removed after the test. */
const tempPath = (): string => tempLedgerPath('turn-cache');

describe('the SQLite ledger turn cache', () => {
  it("answers a session's latest turns and its fork from memory once they were read", async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    await ledger.appendTurns([turn('s1', 'r1', 0)]);
    expect(await ledger.listTurns('s1', { last: 50 })).toHaveLength(1);
    await ledger.appendTurns([turn('s1', 'r2', 0), turn('s1', 'r2', 1)]);
    let listed: unknown;
    const statements = await statementsDuring(async () => {
      listed = await ledger.listTurns('s1', { last: 50 });
      expect(await ledger.getFork('s1')).toBeUndefined();
      expect(await ledger.listTurns('s1', { last: 2 })).toEqual([turn('s1', 'r2', 0), turn('s1', 'r2', 1)]);
    });
    expect(listed).toEqual([turn('s1', 'r1', 0), turn('s1', 'r2', 0), turn('s1', 'r2', 1)]);
    expect(statements.filter((sql) => /turns|session_forks/.test(sql))).toEqual([]);
    await ledger.close();
  });

  it('reads the file again once another connection changed it', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.appendTurns([turn('s1', 'r1', 0)]);
    expect(await ledger.listTurns('s1', { last: 50 })).toHaveLength(1);
    const other = new Database(path);
    other.prepare("UPDATE turns SET content = 'changed elsewhere'").run();
    other.close();
    expect((await ledger.listTurns('s1', { last: 50 })).map((stored) => stored.content)).toEqual([
      'changed elsewhere',
    ]);
    await ledger.close();
  });

  it('forgets the turns of a write that was rolled back', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    await ledger.appendTurns([turn('s1', 'r1', 0)]);
    expect(await ledger.listTurns('s1', { last: 50 })).toHaveLength(1);
    const broken = { ...turn('s1', 'r2', 1), content: null as unknown as string };
    await expect(ledger.appendTurns([turn('s1', 'r2', 0), broken])).rejects.toThrow(/NOT NULL/);
    expect(await ledger.listTurns('s1', { last: 50 })).toEqual([turn('s1', 'r1', 0)]);
    await ledger.close();
  });
});
