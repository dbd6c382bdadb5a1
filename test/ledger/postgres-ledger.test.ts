import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/contract/ledger.js';
import { describeLedgerContract } from '../contracts/ledger.contract.js';
import { emptyPostgresLedger, freshPostgresLedger } from '../support/postgres.js';

const opened: Ledger[] = [];
describeLedgerContract(
  'postgres',
  async () => {
    const ledger = await emptyPostgresLedger();
    opened.push(ledger);
    return ledger;
  },
  async () => {
    for (const ledger of opened.splice(0)) await ledger.close();
  },
  { closesWith: true },
);

describe('createPostgresLedger', () => {
  it('opens', async () => {
    const ledger = freshPostgresLedger();
    await ledger.ready();
    expect(await ledger.lastCursor()).toBe(0);
    await ledger.close();
  });
});
