import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';
import type { SqliteLedgerOptions } from './ledger.js';
import {
  checkLedgerIdentity,
  checkLedgerPath,
  ledgerApplicationId,
  refuseHardLinks,
  translateOpenError,
  unavailable,
} from './file.js';
import { acquireWriterLock, type WriterLock } from './lock.js';
import { migrate, refuseNewer, schemaVersion } from './schema.js';

/**
 * Open the ledger's database: for writing, take the file's writer lock, set WAL and the sync level, and migrate;
 * read-only, refuse a file whose schema version is not this build's (no migration without the lock). Whatever
 * fails is a `RuntimeError` naming the path (`details.path`), the SQLite or file-system error as its `cause`:
 * `ledger_unavailable` (missing directory, a directory, read-only, NUL in the path), `ledger_corrupt`,
 * `ledger_foreign` (another application's database: never touched), `ledger_locked`, `ledger_version`.
 */
export function openDatabase(options: SqliteLedgerOptions): {
  db: Database.Database;
  lock: WriterLock | undefined;
} {
  const { path } = options;
  if (path !== ':memory:') checkLedgerPath(path);
  if (options.readonly === true) return { db: openForReading(path), lock: undefined };
  if (path !== ':memory:') inspectExisting(path);
  const lock = path === ':memory:' ? undefined : acquireWriterLock(path);
  let db: Database.Database | undefined;
  try {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.pragma('busy_timeout = 5000');
    refuseNewer(db, path);
    proveWritable(db, path);
    migrate(db, path);
    return { db, lock };
  } catch (error) {
    db?.close();
    lock?.release();
    throw translateOpenError(error, path);
  }
}

/** Check an existing, non-empty file before anything is written to it or beside it: it must be a ledger. */
function inspectExisting(path: string): void {
  if (!existsSync(path)) return;
  refuseHardLinks(path);
  if (statSync(path).size === 0) return;
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    checkLedgerIdentity(db, path);
  } catch (error) {
    throw translateOpenError(error, path);
  } finally {
    db?.close();
  }
}

/**
 * Stamp the agentlanes application id: a real write, so a file SQLite could only open read-only (a read-only
 * file or directory, an immutable file, even for root) is refused here, at open, instead of at the first write.
 */
function proveWritable(db: Database.Database, path: string): void {
  try {
    db.pragma(`application_id = ${ledgerApplicationId}`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN'))
    ) {
      throw unavailable(path, 'it cannot be written (the file or its directory is read-only)', error);
    }
    throw error;
  }
}

function openForReading(path: string): Database.Database {
  if (!existsSync(path)) {
    throw new RuntimeError('not_found', `no ledger at ${path}`, { details: { path } });
  }
  let db: Database.Database | undefined;
  let version: number;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    checkLedgerIdentity(db, path);
    version = db.pragma('user_version', { simple: true }) as number;
  } catch (error) {
    db?.close();
    throw translateOpenError(error, path);
  }
  if (version !== schemaVersion) {
    db.close();
    throw new RuntimeError(
      'ledger_version',
      version < schemaVersion
        ? `${path} has schema version ${version}, this agentlanes reads ${schemaVersion}; a read-only open does ` +
            'not migrate: open it once with a runtime (or a writable ledger) to upgrade it in place'
        : `${path} has schema version ${version}, this agentlanes reads ${schemaVersion}`,
      { details: { path } },
    );
  }
  return db;
}
