import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createMemoryLedger, type RuntimeOptions } from 'agentlanes';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A ledger path in a fresh temporary directory, removed after the current test. */
export function tempLedgerPath(label = 'test'): string {
  const directory = mkdtempSync(join(tmpdir(), `agentlanes-${label}-`));
  directories.push(directory);
  return join(directory, 'ledger.db');
}

/** Both ledger kinds a runtime test runs on: a fresh memory ledger, or a SQLite file removed after the test. */
export const ledgerKinds = {
  memory: (): RuntimeOptions['ledger'] => createMemoryLedger(),
  sqlite: (): RuntimeOptions['ledger'] => ({ path: tempLedgerPath('runtime') }),
};
