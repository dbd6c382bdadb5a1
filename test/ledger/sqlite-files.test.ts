import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError, type RuntimeError } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { ledgerApplicationId } from '../../src/ledger/sqlite/file.js';
import { cleanUp, freeze, tempDirectory, thrownBy } from './file-guards.js';

afterEach(cleanUp);

/** The RuntimeError that opening a writable ledger at `path` threw. */
function refusal(path: string): RuntimeError {
  const error = thrownBy(() => createSqliteLedger({ path }));
  if (!isRuntimeError(error)) throw new Error(`expected a RuntimeError, got ${String(error)}`);
  return error;
}

function expectRefusal(path: string, code: RuntimeError['code'], named = path): RuntimeError {
  const error = refusal(path);
  expect(error.code).toBe(code);
  expect(error.message).toContain(named);
  expect(error.details).toMatchObject({ path });
  return error;
}

/** A real ledger file with some pages, cut to its first `bytes`. */
function truncatedLedger(dir: string, bytes: number): string {
  const path = join(dir, 'whole.db');
  const raw = new Database(path);
  raw.exec('CREATE TABLE filler (x TEXT)');
  const insert = raw.prepare('INSERT INTO filler VALUES (?)');
  raw.transaction(() => {
    for (let index = 0; index < 2000; index++) insert.run(`row ${index} `.repeat(10));
  })();
  raw.close();
  const cut = join(dir, 'cut.db');
  writeFileSync(cut, readFileSync(path).subarray(0, bytes));
  return cut;
}

describe('createSqliteLedger (the file)', () => {
  it('refuses a path in a missing directory with ledger_unavailable naming the path', () => {
    const path = join(tempDirectory(), 'missing', 'ledger.db');
    const error = expectRefusal(path, 'ledger_unavailable');
    expect(error.message).toContain('does not exist');
  });

  it('refuses a directory as the path with ledger_unavailable', () => {
    const path = join(tempDirectory(), 'a-directory');
    mkdirSync(path);
    expect(expectRefusal(path, 'ledger_unavailable').message).toContain('is a directory');
  });

  it('refuses a path with a NUL character instead of opening the path cut at it', () => {
    const dir = tempDirectory();
    const path = join(dir, 'ledger\u0000.db');
    expectRefusal(path, 'ledger_unavailable', JSON.stringify(path));
    expect(existsSync(join(dir, 'ledger'))).toBe(false);
  });

  it('refuses a truncated ledger with ledger_corrupt, the SQLite error as cause', () => {
    const path = truncatedLedger(tempDirectory(), 8192);
    const error = expectRefusal(path, 'ledger_corrupt');
    expect((error.cause as { code?: string }).code).toBe('SQLITE_CORRUPT');
  });

  it('refuses a file that is not SQLite with ledger_foreign and leaves it as it was', () => {
    const path = join(tempDirectory(), 'notes.txt');
    writeFileSync(path, 'shopping list: '.repeat(40));
    expectRefusal(path, 'ledger_foreign');
    expect(readFileSync(path, 'utf8')).toBe('shopping list: '.repeat(40));
    expect(existsSync(`${path}-lock`)).toBe(false);
  });

  it('refuses the SQLite database of another application with ledger_foreign and adds no table to it', () => {
    const path = join(tempDirectory(), 'other.db');
    const other = new Database(path);
    other.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')");
    other.close();
    expectRefusal(path, 'ledger_foreign');
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all()).toEqual([
      { name: 'contacts' },
    ]);
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();
    expect(existsSync(`${path}-lock`)).toBe(false);
    expect(
      isRuntimeError(
        thrownBy(() => createSqliteLedger({ path, readonly: true })),
        'ledger_foreign',
      ),
    ).toBe(true);
  });

  it('refuses a database stamped with another application id even when it has no tables', () => {
    const path = join(tempDirectory(), 'stamped.db');
    const other = new Database(path);
    other.pragma('application_id = 1234');
    other.close();
    expectRefusal(path, 'ledger_foreign');
  });

  it('stamps a new ledger with the agentlanes application id', async () => {
    const path = join(tempDirectory(), 'ledger.db');
    await createSqliteLedger({ path }).close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma('application_id', { simple: true })).toBe(ledgerApplicationId);
    check.close();
  });

  it('refuses a read-only ledger file at open with ledger_unavailable, not at the first write', async () => {
    const path = join(tempDirectory(), 'ledger.db');
    await createSqliteLedger({ path }).close();
    freeze(path);
    expect(expectRefusal(path, 'ledger_unavailable').message).toContain('read-only');
  });

  it('refuses a ledger in a read-only directory (no room for its write-ahead log) at open', async () => {
    const dir = tempDirectory();
    const path = join(dir, 'ledger.db');
    await createSqliteLedger({ path }).close();
    freeze(dir);
    expectRefusal(path, 'ledger_unavailable');
  });
});

describe('createRuntime (the ledger file)', () => {
  const open = (path: string) => () =>
    createRuntime({
      ledger: { path },
      providers: { scripted: scriptedModel([]) },
      model: { provider: 'scripted', model: 'm' },
    });

  it('throws ledger_unavailable synchronously for a read-only ledger file', async () => {
    const path = join(tempDirectory(), 'ledger.db');
    await createSqliteLedger({ path }).close();
    freeze(path);
    const error = thrownBy(open(path));
    expect(isRuntimeError(error, 'ledger_unavailable')).toBe(true);
    expect((error as RuntimeError).details).toEqual({ path });
  });

  it('throws ledger_unavailable synchronously for a path in a missing directory', () => {
    const path = join(tempDirectory(), 'nowhere', 'ledger.db');
    const error = thrownBy(open(path));
    expect(isRuntimeError(error, 'ledger_unavailable')).toBe(true);
    expect((error as Error).message).toContain(path);
  });
});
