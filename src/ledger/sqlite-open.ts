import Database from 'better-sqlite3';
import { RuntimeError } from '../core/errors.js';
import type { SqliteLedgerOptions } from './sqlite-ledger.js';
import { acquireWriterLock, type WriterLock } from './sqlite-lock.js';
import { migrate, schemaVersion } from './sqlite-schema.js';

/**
 * Open the ledger's database: for writing, take the file's writer lock, set WAL and the sync level, and migrate;
 * read-only, refuse a file whose schema version is not this build's (no migration without the lock).
 */
export function openDatabase(options: SqliteLedgerOptions): {
  db: Database.Database;
  lock: WriterLock | undefined;
} {
  const { path } = options;
  if (options.readonly === true) {
    let db: Database.Database;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true });
    } catch (error) {
      throw new RuntimeError('not_found', `no ledger at ${path}`, { cause: error });
    }
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version !== schemaVersion) {
      db.close();
      throw new RuntimeError(
        'ledger_version',
        version < schemaVersion
          ? `${path} has schema version ${version}, this agentlanes reads ${schemaVersion}; a read-only open does ` +
              'not migrate: open it once with a runtime (or a writable ledger) to upgrade it in place'
          : `${path} has schema version ${version}, this agentlanes reads ${schemaVersion}`,
      );
    }
    return { db, lock: undefined };
  }
  const lock = path === ':memory:' ? undefined : acquireWriterLock(path);
  try {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.pragma('busy_timeout = 5000');
    migrate(db, path);
    return { db, lock };
  } catch (error) {
    lock?.release();
    throw error;
  }
}
