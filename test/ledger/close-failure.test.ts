import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { errorOf } from '../support/error-of.js';

const directories: string[] = [];
const restores: (() => void)[] = [];
afterEach(() => {
  for (const restore of restores.splice(0).reverse()) restore();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function ledgerPath(): { directory: string; path: string } {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-close-'));
  directories.push(directory);
  return { directory, path: join(directory, 'ledger.db') };
}

/** The files under `directory` this process holds open, from /proc/self/fd. */
function openFilesUnder(directory: string): string[] {
  const files: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(directory)) files.push(target);
    } catch {
      // The descriptor readdir itself used is gone by now.
    }
  }
  return files.sort();
}

const full = () => new Database.SqliteError('database or disk is full', 'SQLITE_FULL');

/**
 * Make better-sqlite3 fail as on a full disk, for root too (chmod does not stop root): `COMMIT` and the final
 * checkpoint throw SQLITE_FULL (the transaction stays open, so ROLLBACK fails too when `rollback` is set).
 */
function failLikeAFullDisk(options: { rollback?: boolean } = {}): () => void {
  const prototype = Database.prototype as unknown as {
    exec: (this: Database.Database, sql: string) => unknown;
    pragma: (this: Database.Database, sql: string, options?: unknown) => unknown;
  };
  const exec = prototype.exec;
  const pragma = prototype.pragma;
  prototype.exec = function (sql) {
    if (sql === 'COMMIT' || (options.rollback === true && sql === 'ROLLBACK')) throw full();
    return exec.call(this, sql);
  };
  prototype.pragma = function (sql, pragmaOptions) {
    if (sql.startsWith('wal_checkpoint')) throw full();
    return pragma.call(this, sql, pragmaOptions);
  };
  const restore = () => {
    prototype.exec = exec;
    prototype.pragma = pragma;
  };
  restores.push(restore);
  return restore;
}

describe('SqliteLedger close on a failing disk', () => {
  it('releases the lock and every file and rejects with ledger_unavailable when the last commit and checkpoint fail', async () => {
    const { directory, path } = ledgerPath();
    const ledger = createSqliteLedger({ path });
    await ledger.appendMessage({
      sessionKey: 'telegram:1',
      messageId: 'm1',
      order: 1,
      text: 'kept',
      mode: 'followup',
      status: 'pending',
      acceptedAt: 1,
    });
    expect(openFilesUnder(directory).length).toBeGreaterThan(0);
    const restore = failLikeAFullDisk({ rollback: true });
    const session = {
      sessionKey: 'telegram:2',
      override: {},
      snapshot: null,
      epoch: 0,
      lastSeq: 0,
      updatedAt: 1,
    };
    const refused = ledger.putSession(session).catch((failure: unknown) => failure);
    const error = await errorOf(ledger.close());
    restore();
    expect(await refused).toBeInstanceOf(Error);
    expect(isRuntimeError(error, 'ledger_unavailable'), `got ${String(error)}`).toBe(true);
    expect(error).not.toBeInstanceOf(Database.SqliteError);
    expect(openFilesUnder(directory)).toEqual([]);
    // A second close is harmless.
    await ledger.close();
    const reopened = createSqliteLedger({ path });
    expect((await reopened.listMessages('telegram:1')).map((record) => record.text)).toEqual(['kept']);
    await reopened.close();
  });

  it('lets the same process reopen the ledger after runtime.close() failed on a full disk', async () => {
    const { directory, path } = ledgerPath();
    const clock = fakeClock({ now: 0 });
    const options = {
      ledger: { path },
      providers: { scripted: scriptedModel([{ text: 'one' }, { text: 'two' }], { clock }) },
      model: { provider: 'scripted', model: 'm' },
      clock,
      ids: sequentialIds(),
    };
    const first = createRuntime(options);
    const chat = first.session('telegram:1');
    await chat.send({ id: 'a', text: 'hi' });
    await chat.waitForEnd();
    failLikeAFullDisk();
    const closing = first.close().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    await clock.runAll();
    const error = await closing;
    restores.splice(0).forEach((restore) => restore());
    if (error !== undefined) expect(isRuntimeError(error), 'close() rejects with a coded error').toBe(true);
    expect(openFilesUnder(directory)).toEqual([]);
    const second = createRuntime({ ...options, ids: sequentialIds() });
    expect(await second.session('telegram:9').send({ id: 'c', text: 'hello' })).toMatchObject({
      disposition: 'started',
    });
    const closingSecond = second.close();
    await clock.runAll();
    await closingSecond;
  });
});
