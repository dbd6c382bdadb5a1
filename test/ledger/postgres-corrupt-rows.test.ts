import { afterEach } from 'vitest';
import type { RuntimeError } from 'agentlanes';
import type { Ledger } from '../../src/ledger/contract/ledger.js';
import { describeCorruptRows } from './corrupt-rows.cases.js';
import { freshPostgresLedger, freshSchema, rawQuery } from '../support/postgres.js';

const opened: Ledger[] = [];
afterEach(async () => {
  for (const ledger of opened.splice(0)) await ledger.close();
});

/**
 * Write with a ledger, then change rows behind its back (as a bad hand or a bad migration would), then reopen:
 * the same damage as the SQLite ledger's corrupt-rows tests, read the same way.
 */
async function corrupted(
  write: (ledger: Ledger) => Promise<void>,
  damage: string[],
): Promise<{ ledger: Ledger; reports: RuntimeError[] }> {
  const schema = freshSchema();
  const first = freshPostgresLedger({ schema });
  await write(first);
  await first.close();
  for (const statement of damage) await rawQuery(schema, statement);
  const ledger = freshPostgresLedger({ schema });
  opened.push(ledger);
  const reports: RuntimeError[] = [];
  ledger.onCorruptRow?.((error) => reports.push(error));
  return { ledger, reports };
}

describeCorruptRows('PostgresLedger', corrupted);
