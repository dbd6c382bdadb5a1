/**
 * Messages through the whole runtime: send -> lanes -> actor -> zero-latency scripted model -> run end,
 * over many sessions on the in-memory ledger. Each session is a closed loop: send a message (followup mode,
 * so every message is its own run), wait for its run to end, send the next. The in-memory floor (bench/floor.ts)
 * runs the same workload in the same process, before and after the runtime; the ratio to it is the figure that
 * survives a noisy machine. Also prints the latency the runtime adds (send() call -> run ended), p50 / p99.
 *
 *   npm run build && npx tsx bench/runtime.ts [sessions=10000] [messagesPerSession=5] [concurrency=8]
 *   BENCH_ONLY=runtime node --cpu-prof --import tsx bench/runtime.ts   (one pass only, to profile it)
 */
import { createRuntime, createMemoryLedger } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import {
  argument,
  benchOnly,
  closedLoop,
  p50p99,
  rate,
  type LoopResult,
  type Workload,
} from './closed-loop.js';
import { createFloor } from './floor.js';

const workload: Workload = { sessions: argument(2, 10_000), perSession: argument(3, 5) };
const concurrency = argument(4, 8);

/** One pass of the runtime on a fresh runtime, closed afterwards (so its ledger's heap is gone for what follows). */
async function runtimePass(sessions: Workload, offset: number): Promise<LoopResult> {
  const runtime = createRuntime({
    ledger: createMemoryLedger(),
    providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    queue: { mode: 'followup', debounceMs: 0 },
    globalLane: { concurrency },
  });
  const result = await closedLoop(
    sessions,
    async (session, message, acknowledged) => {
      const chat = runtime.session(`bench:${session}`);
      await chat.send({ id: `m${message}`, text: 'hello' });
      acknowledged();
      const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
      if (ended.status !== 'ended' || ended.run.status !== 'completed')
        throw new Error(`run did not complete: ${JSON.stringify(ended)}`);
    },
    offset,
  );
  await runtime.close();
  return result;
}

/** One pass of the in-memory floor on a fresh floor (its own sessions). */
async function floorPass(sessions: Workload, offset: number): Promise<LoopResult> {
  const floor = createFloor({ concurrency });
  const result = await closedLoop(
    sessions,
    async (session, message, acknowledged) => {
      const { done } = await floor.session(`floor:${session}`).send({ id: `m${message}`, text: 'hello' });
      acknowledged();
      await done;
    },
    offset,
  );
  await floor.close();
  return result;
}

/** Both passes, the floor before and after the runtime; prints the figures and the ratio. */
async function compare(): Promise<void> {
  const floorBefore = (await floorPass(workload, 0)).perSecond;
  const measured = await runtimePass(workload, 0);
  const floorAfter = (await floorPass(workload, 0)).perSecond;
  const floor = (floorBefore + floorAfter) / 2;
  // Unloaded: one session, one message at a time, nothing queued anywhere: what the runtime itself adds.
  const unloaded = await runtimePass({ sessions: 1, perSession: 2000 }, 20_000_000);
  const { sessions, perSession } = workload;
  console.log(
    `runtime bench: ${sessions} sessions x ${perSession} messages, global concurrency ${concurrency}`,
  );
  console.log(`  floor (in memory): ${rate(floor)} (before ${rate(floorBefore)}, after ${rate(floorAfter)})`);
  console.log(
    `  runtime: ${measured.messages} messages in ${measured.seconds.toFixed(2)} s = ${rate(measured.perSecond)} (each its own run)`,
  );
  console.log(`  ratio to the floor: ${(measured.perSecond / floor).toFixed(3)} (target >= 0.6)`);
  console.log(`  send() -> run ended under that load: ${p50p99(measured.latencies)} (mostly lane queueing)`);
  console.log(`  send() -> run ended unloaded (1 session, sequential): ${p50p99(unloaded.latencies, 3)}`);
}

// Warm up the JIT on separate sessions, the floor and the runtime alike.
const warmUp: Workload = { sessions: 500, perSession: 4 };
const only = benchOnly();
if (only !== 'runtime') await floorPass(warmUp, 10_000_000);
if (only !== 'floor') await runtimePass(warmUp, 10_000_000);
if (only === undefined) await compare();
else {
  const result = await (only === 'floor' ? floorPass : runtimePass)(workload, 0);
  console.log(`runtime bench, ${only} only: ${rate(result.perSecond)}`);
}
