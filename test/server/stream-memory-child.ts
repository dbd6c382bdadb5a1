/**
 * The process the stream memory test measures (run with --expose-gc): a runtime with a few recorded events, served
 * over loopback. It opens and lets go of many event streams in cycles, and prints one JSON line:
 * {"iterator": bytes, "sse": bytes}, the heap each stream kept after GC from the second cycle to the last.
 * Iterators are let go by `return()` and by a `for await … break`; SSE clients disconnect after their first frame.
 */
import { request } from 'node:http';
import { createMemoryLedger, createRuntime } from '../../src/index.js';
import { sequentialIds } from '../../src/public/clock.js';
import { createServer } from '../../src/server/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const cycles = 6;
const perCycle = Number(process.argv[2] ?? 300);
const token = 'memory-token-0123456789';
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error('run with --expose-gc');

const runtime = createRuntime({
  ledger: createMemoryLedger(),
  providers: { scripted: scriptedModel([{ text: 'a short answer' }]) },
  model: { provider: 'scripted', model: 'm' },
  ids: sequentialIds(),
});
await runtime.session('web:1').send({ id: 'm1', text: 'hello' });
await runtime.session('web:1').waitForEnd();
const { listen } = createServer(runtime, { auth: { tokens: [{ token }] }, dashboard: false });
const server = await listen({ port: 0 });

/** The heap after the streams let go had every chance to end and be collected. */
async function settledHeap(): Promise<number> {
  for (let turn = 0; turn < 200; turn++) await new Promise((resolve) => setImmediate(resolve));
  collect?.();
  collect?.();
  return process.memoryUsage().heapUsed;
}

/** Open iterators and let each go after its first event: half by return(), half by leaving a for-await loop. */
async function iteratorCycle(): Promise<void> {
  for (let index = 0; index < perCycle; index++) {
    if (index % 2 === 0) {
      const iterator = runtime.events({ after: 0 })[Symbol.asyncIterator]();
      await iterator.next();
      await iterator.return?.();
    } else {
      for await (const event of runtime.events({ after: 0 })) if (event.cursor > 0) break;
    }
  }
}

/** Open an SSE connection, wait for its first event frame, then disconnect. */
function sseOnce(): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${server.url}/v1/events?after=0`);
    const outgoing = request(
      url,
      { headers: { authorization: `Bearer ${token}` }, agent: false },
      (response) => {
        response.on('data', (chunk: Buffer) => {
          if (!chunk.toString().includes('data:')) return;
          outgoing.destroy();
          resolve();
        });
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET') reject(error);
    });
    outgoing.end();
  });
}

async function sseCycle(): Promise<void> {
  for (let index = 0; index < perCycle; index++) await sseOnce();
}

/** Bytes kept per stream from the second cycle to the last. */
async function measure(cycle: () => Promise<void>): Promise<number> {
  const heaps: number[] = [];
  for (let index = 0; index < cycles; index++) {
    await cycle();
    heaps.push(await settledHeap());
  }
  return ((heaps.at(-1) as number) - (heaps[1] as number)) / ((cycles - 2) * perCycle);
}

const iterator = await measure(iteratorCycle);
const sse = await measure(sseCycle);
process.stdout.write(`${JSON.stringify({ iterator, sse })}\n`);
await server.close();
await runtime.close();
