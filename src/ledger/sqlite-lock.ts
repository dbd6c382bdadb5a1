import Database from 'better-sqlite3';
import { RuntimeError } from '../core/errors.js';

/** Held while a process writes a ledger file; released by `release()` or by the process ending (even SIGKILL). */
export interface WriterLock {
  release(): void;
}

/**
 * Take the writer lock of `path`: a side file `<path>-lock` opened in SQLite's exclusive locking mode and written
 * once, so its OS file lock stays held by this connection. A second writer gets `ledger_locked` at once (no busy
 * wait), while readers of the ledger itself (the CLI) are not blocked. The OS drops the lock when the process dies.
 */
export function acquireWriterLock(path: string): WriterLock {
  const lockPath = `${path}-lock`;
  const lock = new Database(lockPath, { timeout: 0 });
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
      });
    }
    throw error;
  }
  return { release: () => lock.close() };
}
