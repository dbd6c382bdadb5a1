import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { isRuntimeError, RuntimeError } from '../../core/index.js';

/** Written to the header of every agentlanes ledger (`PRAGMA application_id`): "AGLN". */
export const ledgerApplicationId = 0x41474c4e;

/** Tables the first migration creates: a file without an application id that holds them all is an older ledger. */
const ledgerTables = ['sessions', 'inbox', 'runs', 'turns', 'events', 'meta'] as const;

/** SQLite result codes of a file that cannot take a write (space, device, permissions, locks held elsewhere). */
const fileFailures: readonly string[] = [
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_READONLY',
  'SQLITE_CANTOPEN',
  'SQLITE_BUSY',
  'SQLITE_PERM',
];

/** Whether SQLite result `code` (an extended one too: `SQLITE_IOERR_WRITE`) says the file cannot take a write. */
export function isFileFailure(code: string): boolean {
  return fileFailures.some((prefix) => code.startsWith(prefix));
}

/** `ledger_unavailable` for the ledger at `path`: it cannot be opened (or written) for the reason given. */
export function unavailable(path: string, problem: string, cause?: unknown): RuntimeError {
  return new RuntimeError('ledger_unavailable', `cannot open the ledger ${path}: ${problem}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { path },
  });
}

/** File-system refusals to write: permissions, an immutable file, a read-only mount. */
const notWritable = new Set(['EACCES', 'EPERM', 'EROFS']);

function nodeCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Refuse a path SQLite would open wrongly or fail on with a raw error: a NUL character (SQLite would silently
 * open the path cut at it), a missing directory, a directory as the file.
 */
export function checkLedgerPath(path: string): void {
  if (path.includes('\u0000')) {
    throw new RuntimeError(
      'ledger_unavailable',
      `cannot open the ledger ${JSON.stringify(path)}: the path contains a NUL character`,
      {
        details: { path },
      },
    );
  }
  const directory = dirname(resolve(path));
  const parent = statOrUndefined(path, directory);
  if (parent === undefined) throw unavailable(path, `the directory ${directory} does not exist`);
  if (!parent.isDirectory()) throw unavailable(path, `${directory} is not a directory`);
  const file = statOrUndefined(path, path);
  if (file?.isDirectory() === true) throw unavailable(path, 'it is a directory');
}

function statOrUndefined(path: string, target: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(target);
  } catch (error) {
    if (nodeCode(error) === 'ENOENT') return undefined;
    throw translateOpenError(error, path);
  }
}

/**
 * Refuse to write a file with several hard links (`ledger_unavailable`): SQLite finds the write-ahead log by the
 * name it was given, so a ledger written through two names gets two logs and is corrupted.
 */
export function refuseHardLinks(path: string, file: string = path): void {
  const links = statOrUndefined(path, file)?.nlink ?? 1;
  if (links > 1) {
    throw unavailable(
      path,
      `the file has ${links} hard links; SQLite finds its write-ahead log by file name, so a ledger written ` +
        'through two names is corrupted: keep one name (copy the file, or use a symbolic link)',
    );
  }
}

/**
 * Turn what opening a ledger file threw into a `RuntimeError` naming the path, the original error as `cause`:
 * a damaged file is `ledger_corrupt`, a file that is not SQLite `ledger_foreign`, a file another connection
 * holds `ledger_locked`, anything else (read-only, no space, no permission) `ledger_unavailable`.
 */
export function translateOpenError(error: unknown, path: string): RuntimeError {
  if (isRuntimeError(error)) return error;
  const code = nodeCode(error) ?? '';
  const said = error instanceof Error ? error.message : String(error);
  const details = { path };
  if (code.startsWith('SQLITE_CORRUPT')) {
    return new RuntimeError('ledger_corrupt', `the ledger ${path} is damaged (${said})`, {
      cause: error,
      details,
    });
  }
  if (code === 'SQLITE_NOTADB') {
    return new RuntimeError(
      'ledger_foreign',
      `${path} is not a SQLite database, so not an agentlanes ledger`,
      {
        cause: error,
        details,
      },
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new RuntimeError('ledger_locked', `${path} is locked by another connection`, {
      cause: error,
      details,
    });
  }
  if (code.startsWith('SQLITE_READONLY') || notWritable.has(code)) {
    return unavailable(path, `the file or its directory is read-only (${said})`, error);
  }
  return unavailable(path, said, error);
}

/**
 * Refuse a database that is not an agentlanes ledger (`ledger_foreign`): one stamped with another application id,
 * or one holding tables without the agentlanes ones. An empty database is a new ledger; one stamped with the
 * agentlanes id, holding the agentlanes tables, or carrying a schema version only a newer agentlanes writes is
 * ours (the version check follows). Reads only.
 */
export function checkLedgerIdentity(db: Database.Database, path: string): void {
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  if (applicationId === ledgerApplicationId) return;
  const foreign = (why: string): RuntimeError =>
    new RuntimeError(
      'ledger_foreign',
      `${path} is a SQLite database of another application (${why}); agentlanes leaves it untouched`,
      { details: { path } },
    );
  if (applicationId !== 0) throw foreign(`application id ${applicationId}`);
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map(
      (row) => row.name,
    ),
  );
  // No tables: a new (or emptied) file; a schema version alone is checked against this build's next.
  if (tables.size === 0) return;
  if (!ledgerTables.every((table) => tables.has(table))) throw foreign('it has no agentlanes tables');
}
