import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach } from 'vitest';
import type { RuntimeError } from 'agentlanes';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import type { Ledger } from '../../src/ledger/contract/ledger.js';
import { describeCorruptRows } from './corrupt-rows.cases.js';

const dirs: string[] = [];
const opened: Ledger[] = [];
afterEach(async () => {
  for (const ledger of opened.splice(0)) await ledger.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-corrupt-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}

/** Write with a ledger, then change rows behind its back (as a bad disk or a bad hand would), then reopen. */
async function corrupted(
  write: (ledger: Ledger) => Promise<void>,
  damage: string[],
): Promise<{ ledger: Ledger; reports: RuntimeError[] }> {
  const path = tempPath();
  const first = createSqliteLedger({ path });
  await write(first);
  await first.close();
  const raw = new Database(path);
  for (const statement of damage) raw.exec(statement);
  raw.close();
  const ledger = createSqliteLedger({ path });
  opened.push(ledger);
  const reports: RuntimeError[] = [];
  ledger.onCorruptRow?.((error) => reports.push(error));
  return { ledger, reports };
}

describeCorruptRows('SqliteLedger', corrupted);
