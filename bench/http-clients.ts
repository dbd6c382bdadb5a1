/**
 * The client side of bench/http.ts, run as its own process: opens CLIENTS Server-Sent Event streams (one session
 * each, round-robin over SESSIONS sessions), then posts MESSAGES messages with CONCURRENCY requests in flight,
 * and reports as one JSON line: requests/s, send latency (POST -> 202) and delivery lag (an event's `at` on the
 * server -> its arrival at a client) percentiles, and how many events the clients received.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';

const url = process.env['BENCH_URL'] as string;
const token = process.env['BENCH_TOKEN'] as string;
const clients = Number(process.env['BENCH_CLIENTS'] ?? 1000);
const sessions = Number(process.env['BENCH_SESSIONS'] ?? 100);
const messages = Number(process.env['BENCH_MESSAGES'] ?? 2000);
const concurrency = Number(process.env['BENCH_CONCURRENCY'] ?? 32);

// Node's fetch (undici) keeps no limit on connections per origin: one per stream, plus the posting ones.
const headers = { authorization: `Bearer ${token}` };

const lags: number[] = [];
let received = 0;

/** Open one stream and count what arrives until the server ends it; resolves once its headers arrived. */
async function follow(session: number, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${url}/v1/sessions/bench:${session}/events?after=now`, { headers, signal });
  if (response.status !== 200 || response.body === null)
    throw new Error(`stream answered ${response.status}`);
  const events = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream());
  void (async () => {
    try {
      for await (const message of events) {
        if (message.event !== undefined) continue;
        const event = JSON.parse(message.data) as { at: number };
        lags.push(Date.now() - event.at);
        received += 1;
      }
    } catch {
      // aborted at the end
    }
  })();
}

/**
 * Post message `index` to its session. A connection reset (a keep-alive socket closed under the request) is retried
 * once: the message id makes a repeat harmless (it would answer `duplicate`).
 */
async function send(index: number): Promise<Response> {
  const post = () =>
    fetch(`${url}/v1/sessions/bench:${index % sessions}/messages`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ id: `m${index}`, text: 'hello', mode: 'followup' }),
    });
  try {
    return await post();
  } catch {
    return post();
  }
}

/** p50 and p99 of a list of milliseconds. */
function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

async function main(): Promise<void> {
  const controller = new AbortController();
  for (let client = 0; client < clients; client += 50) {
    const batch = Array.from({ length: Math.min(50, clients - client) }, (_, index) =>
      follow((client + index) % sessions, controller.signal),
    );
    await Promise.all(batch);
  }
  const sends: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < messages) {
        const index = next++;
        const begin = performance.now();
        const response = await send(index);
        await response.arrayBuffer();
        if (response.status !== 202) throw new Error(`send answered ${response.status}`);
        sends.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // Let the last runs' events arrive, then leave.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  controller.abort();
  const figures = {
    clients,
    sessions,
    messages,
    requestsPerSecond: Math.round(messages / seconds),
    send: percentiles(sends),
    lag: percentiles(lags),
    eventsReceived: received,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

await main();
