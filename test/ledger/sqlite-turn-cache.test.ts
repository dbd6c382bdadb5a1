import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { turn } from '../contracts/ledger-fixtures.contract.js';

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-turn-cache-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The SQL of every statement better-sqlite3 runs while `work` runs (prepared statements' run / get / all). */
async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  const seen: string[] = [];
  const originals = new Map<string, unknown>();
  for (const method of ['run', 'get', 'all']) {
    const original = prototype[method] as (...args: unknown[]) => unknown;
    originals.set(method, original);
    prototype[method] = function (this: { source: string }, ...args: unknown[]) {
      seen.push(this.source);
      return original.apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    for (const [method, original] of originals) prototype[method] = original;
  }
  return seen;
}

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
