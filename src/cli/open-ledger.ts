import { RuntimeError } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import { inspectLedgerFile } from './ledger-file.js';

/** Opens the ledger a command reads; commands take it as a parameter so tests can pass a memory ledger. */
export type LedgerOpener = (path: string) => Promise<Ledger>;

/**
 * Why `path` cannot be read as a ledger, as a `RuntimeError` naming the path; undefined when it looks like one.
 * Checked before SQLite opens the file, so a directory or another application's file gets a plain answer.
 */
export function refuseLedgerFile(path: string): RuntimeError | undefined {
  const details = { path };
  const inspection = inspectLedgerFile(path);
  switch (inspection.kind) {
    case 'missing':
      return new RuntimeError(
        'not_found',
        `no ledger at ${path} (pass --db with the path of an agentlanes database)`,
        { details },
      );
    case 'directory':
      return new RuntimeError(
        'ledger_unavailable',
        `${path} is a directory, not a ledger file (pass --db with the path of an agentlanes database)`,
        { details },
      );
    case 'empty':
      return new RuntimeError('ledger_foreign', `${path} is empty: it holds no agentlanes ledger`, {
        details,
      });
    case 'not_sqlite':
      return new RuntimeError(
        'ledger_foreign',
        `${path} is not a SQLite database, so not an agentlanes ledger`,
        {
          details,
        },
      );
    case 'foreign':
      return new RuntimeError(
        'ledger_foreign',
        `${path} is a SQLite database of another application, not an agentlanes ledger`,
        { details },
      );
    case 'agentlanes':
      return undefined;
  }
}

/**
 * Open the SQLite ledger at `path` read-only. A missing file is an error naming the path: reading must never
 * create an empty database where the user mistyped one.
 */
export async function openLedger(path: string): Promise<Ledger> {
  const refusal = refuseLedgerFile(path);
  if (refusal !== undefined) throw refusal;
  // Loaded on demand: `help` and `--version` need none of the ledger code.
  const { createSqliteLedger } = await import('../ledger/sqlite/ledger.js');
  return createSqliteLedger({ path, readonly: true });
}
