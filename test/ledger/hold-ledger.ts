// Child process for sqlite-lock.test.ts: open a ledger for writing, say so, then hold it until killed.
import { createSqliteLedger } from '../../src/ledger/sqlite-ledger.js';

const ledger = createSqliteLedger({ path: process.argv[2] as string });
await ledger.appendMessage({
  sessionKey: 'held',
  messageId: 'm1',
  order: 1,
  text: 'written by the holder',
  mode: 'collect',
  status: 'pending',
  acceptedAt: 1,
});
process.stdout.write('ready\n');
process.stdin.resume();
