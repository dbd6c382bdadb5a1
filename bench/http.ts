/**
 * The HTTP server under load: a runtime on a SQLite file (scripted model, a few words per answer) served by
 * `createServer` on loopback, and a second process (bench/http-clients.ts) that follows N sessions' event streams
 * (N >= 1000 concurrent SSE clients) while it posts messages. Prints requests/s, send p50/p99 (POST -> 202),
 * SSE delivery lag p50/p99 (an event's `at` -> its arrival at a client), the events delivered, and the server's
 * peak RSS. A figure, not a test.
 *
 *   npx tsx bench/http.ts [clients=1000] [sessions=100] [messages=2000] [concurrency=32]
 *   BENCH_LEDGER=memory npx tsx bench/http.ts …   (the in-memory ledger: no fsync in the figures)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLedger, createRuntime } from '../src/index.js';
import { createServer } from '../src/server/index.js';
import { scriptedModel } from '../src/testing/index.js';
import { argument } from './closed-loop.js';

const clients = argument(2, 1000);
const sessions = argument(3, 100);
const messages = argument(4, 2000);
const concurrency = argument(5, 32);
const token = 'bench-token-0123456789';

interface ClientFigures {
  readonly requestsPerSecond: number;
  readonly send: { p50: number; p99: number };
  readonly lag: { p50: number; p99: number };
  readonly eventsReceived: number;
}

/** Run the client process against `url`; resolves its figures. */
function runClients(url: string): Promise<ClientFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'http-clients.ts')], {
      env: {
        ...process.env,
        BENCH_URL: url,
        BENCH_TOKEN: token,
        BENCH_CLIENTS: String(clients),
        BENCH_SESSIONS: String(sessions),
        BENCH_MESSAGES: String(messages),
        BENCH_CONCURRENCY: String(concurrency),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(output) as ClientFigures);
      else reject(new Error(`the client process exited ${code}`));
    });
  });
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-http-bench-'));
  const runtime = createRuntime({
    ledger:
      process.env['BENCH_LEDGER'] === 'memory' ? createMemoryLedger() : { path: join(directory, 'bench.db') },
    providers: { scripted: scriptedModel(() => ({ text: 'ok, here is the answer' }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    queue: { mode: 'followup', debounceMs: 0 },
  });
  const server = await createServer(runtime, { auth: { tokens: [{ token }] }, dashboard: false }).listen({
    port: 0,
  });
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  try {
    const figures = await runClients(server.url);
    const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
    console.log(
      `http: ${clients} SSE clients over ${sessions} sessions, ${messages} messages, ${concurrency} in flight`,
    );
    console.log(`  requests/s          ${figures.requestsPerSecond}`);
    console.log(
      `  send p50 / p99      ${figures.send.p50.toFixed(1)} ms / ${figures.send.p99.toFixed(1)} ms`,
    );
    console.log(`  SSE lag p50 / p99   ${figures.lag.p50} ms / ${figures.lag.p99} ms`);
    console.log(`  events delivered    ${figures.eventsReceived}`);
    console.log(`  server peak RSS     ${mb(peakRss)}`);
  } finally {
    clearInterval(sampler);
    await server.close();
    await runtime.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
