import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { writerLockPath } from '../ledger/index.js';

/** What a path holds, as far as the CLI needs to know before it reads or replaces it. */
export type LedgerFileKind = 'missing' | 'directory' | 'empty' | 'not_sqlite' | 'foreign' | 'agentlanes';

/** The result of `inspectLedgerFile`. */
export interface LedgerFileInspection {
  readonly kind: LedgerFileKind;
  /** The file's `PRAGMA user_version`, for an agentlanes ledger. */
  readonly version?: number;
}

/** Every SQLite database file starts with these 16 bytes. */
const sqliteHeader = 'SQLite format 3\u0000';

/** Tables the first agentlanes migration creates: a file holding them all is an agentlanes ledger. */
const ledgerTables = ['sessions', 'inbox', 'runs', 'turns', 'events', 'meta'] as const;

function startsLikeSqlite(path: string): boolean {
  const header = Buffer.alloc(sqliteHeader.length);
  const descriptor = openSync(path, 'r');
  try {
    const read = readSync(descriptor, header, 0, header.length, 0);
    return read === header.length && header.toString('latin1') === sqliteHeader;
  } finally {
    closeSync(descriptor);
  }
}

/** A WAL-mode database may keep everything in `<path>-wal` while its main file is still empty. */
function hasWriteAheadLog(path: string): boolean {
  const wal = `${path}-wal`;
  return existsSync(wal) && statSync(wal).size > 0;
}

function inspectDatabase(path: string): LedgerFileInspection {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch {
    return { kind: 'not_sqlite' };
  }
  try {
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (row) => row.name,
      ),
    );
    const version = db.pragma('user_version', { simple: true }) as number;
    if (tables.size === 0 && version === 0) return { kind: 'empty' };
    if (ledgerTables.every((table) => tables.has(table))) return { kind: 'agentlanes', version };
    return { kind: 'foreign' };
  } catch {
    // Encrypted, truncated or otherwise unreadable: it is not a ledger this build can read.
    return { kind: 'not_sqlite' };
  } finally {
    db.close();
  }
}

/**
 * Look at `path` without changing it: missing, a directory, empty, not SQLite at all, a SQLite file of another
 * application, or an agentlanes ledger (with its schema version). Opens the file read-only, never creates it.
 */
export function inspectLedgerFile(path: string): LedgerFileInspection {
  if (!existsSync(path)) return { kind: 'missing' };
  const stat = statSync(path);
  if (stat.isDirectory()) return { kind: 'directory' };
  if (!stat.isFile()) return { kind: 'not_sqlite' };
  if (stat.size === 0 && !hasWriteAheadLog(path)) return { kind: 'empty' };
  if (stat.size > 0 && !startsLikeSqlite(path)) return { kind: 'not_sqlite' };
  return inspectDatabase(path);
}

/**
 * True while another connection holds the writer lock of the ledger at `path` (the `-lock` side file beside the
 * real file, links resolved, that a writing runtime keeps in SQLite's exclusive mode). Reading the lock file fails
 * at once while it is held.
 */
export function isLedgerHeld(path: string): boolean {
  if (!existsSync(path)) return false;
  const lockPath = writerLockPath(path);
  if (!existsSync(lockPath)) return false;
  let lock: Database.Database | undefined;
  try {
    lock = new Database(lockPath, { readonly: true, fileMustExist: true, timeout: 0 });
    lock.prepare('SELECT count(*) FROM sqlite_master').get();
    return false;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  } finally {
    lock?.close();
  }
}
