/**
 * The runtime benchmark on the SQLite ledger (synchronous FULL, group commit): many sessions as closed loops,
 * each message its own run. The durable floor (bench/floor.ts with 3 rows per message group-committed on SQLite)
 * runs the same workload in the same process, before and after the runtime. Prints throughput and its ratio to
 * the floor, send() acknowledgement latency (the message is durable when send() resolves) and bytes on disk per
 * message, for both.
 *
 *   npm run build && npx tsx bench/ledger.ts [sessions=10000] [messagesPerSession=5] [synchronous=full]
 *   BENCH_ONLY=runtime node --cpu-prof --import tsx bench/ledger.ts   (one pass only, to profile it)
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../dist/index.js';
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
import { sqliteFloorStore } from './floor-store.js';

const workload: Workload = { sessions: argument(2, 10_000), perSession: argument(3, 5) };
const synchronous = process.argv[4] === 'normal' ? 'normal' : 'full';
const concurrency = 8;
const dir = mkdtempSync(join(tmpdir(), 'agentlanes-bench-'));
let files = 0;

/** What one pass measured, with the bytes its database took on disk. */
interface Pass extends LoopResult {
  bytesPerMessage: number;
}

/** Bytes of a database and its WAL, then remove them. */
function bytesOnDisk(path: string): number {
  const size = [path, `${path}-wal`].filter(existsSync).reduce((sum, file) => sum + statSync(file).size, 0);
  for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
  return size;
}

/** One pass of the runtime on a fresh SQLite file. */
async function runtimePass(sessions: Workload): Promise<Pass> {
  const path = join(dir, `runtime-${++files}.db`);
  const runtime = createRuntime({
    ledger: { path, synchronous },
    providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    queue: { mode: 'followup', debounceMs: 0 },
    globalLane: { concurrency },
  });
  const result = await closedLoop(sessions, async (session, message, acknowledged) => {
    const chat = runtime.session(`bench:${session}`);
    await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    acknowledged();
    const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
    if (ended.status === 'ended' && ended.run.status !== 'completed')
      throw new Error(`run ${ended.run.status}`);
  });
  await runtime.close();
  return { ...result, bytesPerMessage: bytesOnDisk(path) / result.messages };
}

/** One pass of the durable floor on a fresh SQLite file. */
async function floorPass(sessions: Workload): Promise<Pass> {
  const path = join(dir, `floor-${++files}.db`);
  const floor = createFloor({ concurrency, store: sqliteFloorStore({ path, synchronous }) });
  const result = await closedLoop(sessions, async (session, message, acknowledged) => {
    const chat = floor.session(`bench:${session}`);
    const { done } = await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    acknowledged();
    await done;
  });
  await floor.close();
  return { ...result, bytesPerMessage: bytesOnDisk(path) / result.messages };
}

/** Both passes, the floor before and after the runtime; prints the figures and the ratio. */
async function compare(): Promise<void> {
  const floorBefore = await floorPass(workload);
  const measured = await runtimePass(workload);
  const floorAfter = await floorPass(workload);
  const floor = (floorBefore.perSecond + floorAfter.perSecond) / 2;
  const { sessions, perSession } = workload;
  console.log(
    `ledger bench: SQLite synchronous=${synchronous}, ${sessions} sessions x ${perSession} messages`,
  );
  console.log(
    `  floor (3 rows/message, group commit): ${rate(floor)} (before ${rate(floorBefore.perSecond)}, after ${rate(floorAfter.perSecond)})`,
  );
  console.log(`  floor acknowledgement: ${p50p99([...floorBefore.acks, ...floorAfter.acks])}`);
  console.log(
    `  runtime: ${measured.messages} messages in ${measured.seconds.toFixed(2)} s = ${rate(measured.perSecond)} (each its own run)`,
  );
  console.log(`  ratio to the floor: ${(measured.perSecond / floor).toFixed(3)} (target >= 0.75)`);
  console.log(
    `  send() acknowledgement (durable), session live: ${p50p99(measured.acks)} (target p50 <= 2 ms)`,
  );
  console.log(
    `  send() acknowledgement, first message of a new session (${sessions} at once): ${p50p99(measured.firstAcks)}`,
  );
  console.log(
    `  on disk: ${Math.round(measured.bytesPerMessage)} bytes per message (target <= 1,536; floor ${Math.round(floorBefore.bytesPerMessage)})`,
  );
}

const warmUp: Workload = { sessions: 500, perSession: 2 };
const only = benchOnly();
if (only !== 'runtime') await floorPass(warmUp);
if (only !== 'floor') await runtimePass(warmUp);
if (only === undefined) await compare();
else {
  const result = await (only === 'floor' ? floorPass : runtimePass)(workload);
  console.log(
    `ledger bench, ${only} only: ${rate(result.perSecond)}, acknowledgement ${p50p99(result.acks)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
