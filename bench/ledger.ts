/**
 * The runtime benchmark on the SQLite ledger (synchronous FULL, group commit): many sessions as closed loops,
 * each message its own run. Prints throughput, send() acknowledgement latency (the message is durable when
 * send() resolves) and bytes on disk per message.
 *
 *   npm run build && npx tsx bench/ledger.ts [sessions=10000] [messagesPerSession=5] [synchronous=full]
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';

const sessions = Number(process.argv[2] ?? 10_000);
const perSession = Number(process.argv[3] ?? 5);
const synchronous = process.argv[4] === 'normal' ? 'normal' : 'full';
const dir = mkdtempSync(join(tmpdir(), 'agentlanes-bench-'));
const path = join(dir, 'bench.db');

const runtime = createRuntime({
  ledger: { path, synchronous },
  providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
  model: { provider: 'scripted', model: 'bench' },
  queue: { mode: 'followup', debounceMs: 0 },
});

const acks: number[] = [];
const firstAcks: number[] = [];
async function loop(index: number): Promise<void> {
  const chat = runtime.session(`bench:${index}`);
  for (let message = 0; message < perSession; message++) {
    const sentAt = performance.now();
    await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    (message === 0 ? firstAcks : acks).push(performance.now() - sentAt);
    const result = await chat.waitForEnd({ timeoutMs: 600_000 });
    if (result.status === 'ended' && result.run.status !== 'completed')
      throw new Error(`run ${result.run.status}`);
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: sessions }, (_, index) => loop(index)));
const seconds = (performance.now() - started) / 1000;
await runtime.close();

function percentile(values: number[], p: number): number {
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? 0;
}
const size = [path, `${path}-wal`].filter(existsSync).reduce((sum, file) => sum + statSync(file).size, 0);
const total = sessions * perSession;
console.log(`ledger bench: SQLite synchronous=${synchronous}, ${sessions} sessions x ${perSession} messages`);
console.log(
  `  ${total} messages in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} messages/s (each its own run)`,
);
console.log(
  `  send() acknowledgement (durable), session live: p50 ${percentile(acks, 50).toFixed(2)} ms, p99 ${percentile(acks, 99).toFixed(2)} ms`,
);
console.log(
  `  send() acknowledgement, first message of a session (hydration, ${sessions} at once): p50 ${percentile(firstAcks, 50).toFixed(2)} ms, p99 ${percentile(firstAcks, 99).toFixed(2)} ms`,
);
console.log(`  on disk: ${(size / 1e6).toFixed(1)} MB = ${Math.round(size / total)} bytes per message`);
rmSync(dir, { recursive: true, force: true });
