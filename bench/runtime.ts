/**
 * Messages through the whole runtime: send -> lanes -> actor -> zero-latency scripted model -> run end,
 * over many sessions on the in-memory ledger. Each session is a closed loop: send a message (followup mode,
 * so every message is its own run), wait for its run to end, send the next.
 * Prints throughput and the latency the runtime adds (send() call -> run ended), p50 / p99.
 *
 *   npm run build && npx tsx bench/runtime.ts [sessions=10000] [messagesPerSession=5] [concurrency=8]
 */
import { createRuntime, createMemoryLedger } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';

const sessions = Number(process.argv[2] ?? 10_000);
const perSession = Number(process.argv[3] ?? 5);
const concurrency = Number(process.argv[4] ?? 8);

const model = scriptedModel(() => ({ text: 'ok, done' }), { record: false });
const runtime = createRuntime({
  ledger: createMemoryLedger(),
  providers: { scripted: model },
  model: { provider: 'scripted', model: 'bench' },
  queue: { mode: 'followup', debounceMs: 0 },
  globalLane: { concurrency },
});

const latencies: number[] = [];
async function loop(index: number, messages = perSession): Promise<void> {
  const chat = runtime.session(`bench:${index}`);
  for (let message = 0; message < messages; message++) {
    const sentAt = performance.now();
    await chat.send({ id: `m${message}`, text: 'hello' });
    const result = await chat.waitForEnd({ timeoutMs: 600_000 });
    if (result.status !== 'ended' || result.run.status !== 'completed')
      throw new Error(`run did not complete: ${JSON.stringify(result)}`);
    latencies.push(performance.now() - sentAt);
  }
}

// Warm up the JIT on a separate set of sessions.
await Promise.all(Array.from({ length: 500 }, (_, index) => loop(sessions + index, 4)));
latencies.length = 0;

function percentiles(values: number[]): { p50: number; p99: number } {
  values.sort((a, b) => a - b);
  const at = (p: number): number =>
    values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? 0;
  return { p50: at(50), p99: at(99) };
}

const started = performance.now();
await Promise.all(Array.from({ length: sessions }, (_, index) => loop(index)));
const seconds = (performance.now() - started) / 1000;
const loaded = percentiles(latencies.splice(0));

// Unloaded: one session, one message at a time, nothing queued anywhere: what the runtime itself adds.
await loop(sessions + 1_000_000, 2000);
const unloaded = percentiles(latencies.splice(0));
await runtime.close();

const total = sessions * perSession;
console.log(
  `runtime bench: ${sessions} sessions x ${perSession} messages, global concurrency ${concurrency}`,
);
console.log(
  `  ${total} messages in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} messages/s (each its own run)`,
);
console.log(
  `  send() -> run ended under that load: p50 ${loaded.p50.toFixed(2)} ms, p99 ${loaded.p99.toFixed(2)} ms (mostly lane queueing)`,
);
console.log(
  `  send() -> run ended unloaded (1 session, sequential): p50 ${unloaded.p50.toFixed(3)} ms, p99 ${unloaded.p99.toFixed(3)} ms`,
);
