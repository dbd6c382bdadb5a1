import { closeSync, openSync, realpathSync } from 'node:fs';
import Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';
import { refuseHardLinks, translateOpenError } from './file.js';

/** Held while a process writes a ledger file; released by `release()` or by the process ending (even SIGKILL). */
export interface WriterLock {
  /** The resolved path of the database file the lock guards (symbolic links followed). */
  readonly realPath: string;
  release(): void;
}

/** Where the writer lock of the ledger at `path` lives: beside the file itself, symbolic links resolved. */
export function writerLockPath(path: string): string {
  return `${realpathSync(path)}-lock`;
}

/**
 * The database file behind `path`, created empty when missing (SQLite would create it the next moment), with
 * symbolic links resolved; a file with several hard links is refused (see `refuseHardLinks`).
 */
function resolveDatabaseFile(path: string): string {
  let realPath: string;
  try {
    closeSync(openSync(path, 'a'));
    realPath = realpathSync(path);
  } catch (error) {
    throw translateOpenError(error, path);
  }
  refuseHardLinks(path, realPath);
  return realPath;
}

/**
 * Take the writer lock of the database file at `path`: a side file `<real path>-lock` opened in SQLite's
 * exclusive locking mode and written once, so its OS file lock stays held by this connection. The lock belongs
 * to the file, not to the name: a symbolic link leads to the same lock, a hard link is refused. A second writer
 * gets `ledger_locked` at once (no busy wait), while readers of the ledger itself (the CLI) are not blocked. The
 * OS drops the lock when the process dies.
 */
export function acquireWriterLock(path: string): WriterLock {
  const realPath = resolveDatabaseFile(path);
  const lockPath = `${realPath}-lock`;
  let lock: Database.Database;
  try {
    lock = new Database(lockPath, { timeout: 0 });
  } catch (error) {
    throw translateOpenError(error, path);
  }
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER)');
    lock.prepare('DELETE FROM holder').run();
    lock.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
  } catch (error) {
    lock.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new RuntimeError('ledger_locked', `${path} is open for writing in another process`, {
        cause: error,
        details: { path },
      });
    }
    throw translateOpenError(error, path);
  }
  return { realPath, release: () => lock.close() };
}
