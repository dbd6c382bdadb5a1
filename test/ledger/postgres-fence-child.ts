/**
 * The worker the fencing test stops with SIGSTOP. Run as
 * `node --import tsx test/ledger/postgres-fence-child.ts <connectionString> <schema> <sessionKey>`.
 * It claims the session, then writes one turn after another under its epoch, as fast as the ledger takes them,
 * printing one JSON line per write: {"claimed":epoch} first, then {"ok":n} or {"refused":n,"code":"…"}. After 20
 * `fenced` refusals in a row it closes the ledger and exits 0. (The write in flight when it was stopped inside a
 * transaction fails otherwise: the server ended that transaction and its connection, `ledger_unavailable`.)
 */
import { createPostgresLedger } from '../../src/ledger/postgres/ledger.js';

const [connectionString = '', schema = '', sessionKey = ''] = process.argv.slice(2);
const ledger = createPostgresLedger({ connectionString, schema, idleInTransactionTimeoutMs: 1000 });
const epoch = await ledger.claimSession(sessionKey, Date.now());
const fenced = ledger.fenced({ sessionKey, epoch });
process.stdout.write(`${JSON.stringify({ claimed: epoch })}\n`);

let refusedInARow = 0;
for (let n = 1; refusedInARow < 20; n++) {
  try {
    await fenced.appendTurns([
      { sessionKey, runId: `child-${epoch}`, index: n, role: 'assistant', content: `write ${n}`, at: n },
    ]);
    refusedInARow = 0;
    process.stdout.write(`${JSON.stringify({ ok: n })}\n`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    refusedInARow = code === 'fenced' ? refusedInARow + 1 : 0;
    process.stdout.write(`${JSON.stringify({ refused: n, code })}\n`);
  }
}
await ledger.close();
