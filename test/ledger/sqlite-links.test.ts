import { existsSync, linkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { cleanUp, freeze, holdInAnotherProcess, tempDirectory, thawAll, thrownBy } from './file-guards.js';

afterEach(cleanUp);

describe('createSqliteLedger (the writer lock belongs to the file)', () => {
  it('refuses a writer through a symbolic link with ledger_locked when another process holds the real file', async () => {
    const dir = tempDirectory();
    const path = join(dir, 'ledger.db');
    await holdInAnotherProcess(path);
    const link = join(dir, 'link.db');
    symlinkSync(path, link);

    const refused = thrownBy(() => createSqliteLedger({ path: link }));
    // Compared as fields, so a failure shows which error came instead.
    expect({ locked: isRuntimeError(refused, 'ledger_locked'), refused: String(refused) }).toMatchObject({
      locked: true,
    });
    expect((refused as Error).message).toContain(link);
  });

  it('refuses a writer of the real file with ledger_locked when another process holds it through a symbolic link', async () => {
    const dir = tempDirectory();
    const path = join(dir, 'ledger.db');
    const link = join(dir, 'link.db');
    await createSqliteLedger({ path }).close();
    symlinkSync(path, link);
    const holder = await holdInAnotherProcess(link);

    expect(
      isRuntimeError(
        thrownBy(() => createSqliteLedger({ path })),
        'ledger_locked',
      ),
    ).toBe(true);

    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    const after = createSqliteLedger({ path });
    expect((await after.listMessages('held')).map((record) => record.text)).toEqual([
      'written by the holder',
    ]);
    await after.close();
  });

  it('refuses a writer through a hard link while another process holds the file, writing nothing', async () => {
    const dir = tempDirectory();
    const path = join(dir, 'ledger.db');
    await holdInAnotherProcess(path);
    const link = join(dir, 'hard.db');
    linkSync(path, link);

    const refused = thrownBy(() => createSqliteLedger({ path: link }));
    expect(isRuntimeError(refused, 'ledger_unavailable')).toBe(true);
    expect((refused as Error).message).toContain('2 hard links');
    expect((refused as { details?: unknown }).details).toEqual({ path: link });
    // Neither a second write-ahead log nor a lock of its own was made beside the second name.
    expect(existsSync(`${link}-wal`)).toBe(false);
    expect(existsSync(`${link}-lock`)).toBe(false);
  });

  it('releases the writer lock when close fails', async () => {
    const path = join(tempDirectory(), 'ledger.db');
    const ledger = createSqliteLedger({ path });
    await ledger.putSession({
      sessionKey: 's1',
      override: {},
      snapshot: undefined,
      epoch: 1,
      lastSeq: 0,
      updatedAt: 0,
    });
    // The closing checkpoint truncates the write-ahead log: an immutable log makes it fail.
    freeze(`${path}-wal`);
    await expect(ledger.close()).rejects.toThrow();
    thawAll();

    const reopened = createSqliteLedger({ path });
    expect(await reopened.getSession('s1')).toMatchObject({ sessionKey: 's1' });
    await reopened.close();
  });
});
