// Child process for the writer-lock tests: open a ledger for writing, say so, then hold it until killed.
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';

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
// Keep the ledger reachable: a ledger nothing refers to any more is garbage-collected, and its connections (the
// writer lock among them) close with it, so a holder that only kept it in a top-level constant let go of the lock
// at its first full collection (a CI run caught it).
process.stdin.on('end', () => void ledger.close());
process.stdout.write('ready\n');
process.stdin.resume();
