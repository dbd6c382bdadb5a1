import { existsSync } from 'node:fs';
import { RuntimeError } from '../core/errors.js';
import type { Ledger } from '../ledger/ledger.js';

/** Opens the ledger a command reads; commands take it as a parameter so tests can pass a memory ledger. */
export type LedgerOpener = (path: string) => Promise<Ledger>;

/**
 * Open the SQLite ledger at `path` read-only. A missing file is an error naming the path: reading must never
 * create an empty database where the user mistyped one.
 */
export async function openLedger(path: string): Promise<Ledger> {
  if (!existsSync(path)) {
    throw new RuntimeError(
      'not_found',
      `no ledger at ${path} (pass --db with the path of an agentlanes database)`,
      {
        details: { path },
      },
    );
  }
  // Loaded on demand so `demo` and `help` never load the native SQLite addon.
  const { createSqliteLedger } = await import('../ledger/sqlite-ledger.js');
  return createSqliteLedger({ path, readonly: true });
}
