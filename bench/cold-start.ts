/**
 * Cold start: a SQLite ledger holds many hibernated sessions (each ran one message, then the runtime closed); a
 * fresh runtime opens it and every session sends its next message at once. Prints the acknowledgement latency of
 * those sends (each must hydrate its session first) and the time until every run ended, beside the durable floor
 * (bench/floor.ts: sessions hydrated with one batched SELECT per event-loop turn) doing the same in the same
 * process. The pass that fills the file is printed too: the first message of as many new sessions at once.
 *
 *   npm run build && npx tsx bench/cold-start.ts [sessions=10000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, type Runtime } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import {
  argument,
  closedLoop,
  p50p99,
  percentile,
  type LoopResult,
  type SendMessage,
} from './closed-loop.js';
import { createFloor, type Floor } from './floor.js';
import { sqliteFloorStore } from './floor-store.js';

const count = argument(2, 10_000);
const dir = mkdtempSync(join(tmpdir(), 'agentlanes-cold-start-'));

function openRuntime(path: string): Runtime {
  return createRuntime({
    ledger: { path },
    providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    queue: { mode: 'followup', debounceMs: 0 },
  });
}

function throughRuntime(runtime: Runtime): SendMessage {
  return async (session, message, acknowledged) => {
    const chat = runtime.session(`cold:${session}`);
    await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    acknowledged();
    const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
    if (ended.status === 'ended' && ended.run.status !== 'completed')
      throw new Error(`run ${ended.run.status}`);
  };
}

function throughFloor(floor: Floor): SendMessage {
  return async (session, message, acknowledged) => {
    const { done } = await floor
      .session(`cold:${session}`)
      .send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    acknowledged();
    await done;
  };
}

/** What a cold start measured: the pass that filled the file (new sessions) and the cold pass. */
interface ColdStart {
  readonly fresh: LoopResult;
  readonly cold: LoopResult;
}

/** Fill a file with hibernated sessions (one message each), then cold-start on it: the second message at once. */
async function runtimeColdStart(path: string, sessions: number): Promise<ColdStart> {
  const warm = openRuntime(path);
  const fresh = await closedLoop({ sessions, perSession: 1 }, throughRuntime(warm));
  await warm.close();
  const runtime = openRuntime(path);
  const cold = await closedLoop({ sessions, perSession: 1 }, (session, _message, acknowledged) =>
    throughRuntime(runtime)(session, 1, acknowledged),
  );
  await runtime.close();
  return { fresh, cold };
}

/** The same on the durable floor. */
async function floorColdStart(path: string, sessions: number): Promise<ColdStart> {
  const warm = createFloor({ store: sqliteFloorStore({ path }) });
  const fresh = await closedLoop({ sessions, perSession: 1 }, throughFloor(warm));
  await warm.close();
  const restarted = createFloor({ store: sqliteFloorStore({ path }) });
  const cold = await closedLoop({ sessions, perSession: 1 }, (session, _message, acknowledged) =>
    throughFloor(restarted)(session, 1, acknowledged),
  );
  if (restarted.liveSessions !== sessions)
    throw new Error(`floor hydrated ${restarted.liveSessions} sessions`);
  await restarted.close();
  return { fresh, cold };
}

// Warm up the JIT on a small file of each.
await floorColdStart(join(dir, 'warm-floor.db'), 500);
await runtimeColdStart(join(dir, 'warm-runtime.db'), 500);

const floor = await floorColdStart(join(dir, 'floor.db'), count);
const measured = await runtimeColdStart(join(dir, 'runtime.db'), count);
rmSync(dir, { recursive: true, force: true });

const ratio = (runtime: LoopResult, base: LoopResult): string =>
  `${(percentile(runtime.firstAcks, 50) / percentile(base.firstAcks, 50)).toFixed(2)}x`;
console.log(`cold-start bench: ${count} hibernated sessions on SQLite (FULL), each sends a message at once`);
console.log(
  `  floor acknowledgement: ${p50p99(floor.cold.firstAcks)}; every run ended after ${floor.cold.seconds.toFixed(2)} s`,
);
console.log(
  `  runtime acknowledgement: ${p50p99(measured.cold.firstAcks)}; every run ended after ${measured.cold.seconds.toFixed(2)} s`,
);
console.log(`  runtime p50 / floor p50: ${ratio(measured.cold, floor.cold)} (target <= 1.5x)`);
console.log(`the pass that filled the file: ${count} new sessions, each sends its first message at once`);
console.log(`  floor acknowledgement: ${p50p99(floor.fresh.firstAcks)}`);
console.log(
  `  runtime acknowledgement: ${p50p99(measured.fresh.firstAcks)} (${ratio(measured.fresh, floor.fresh)} the floor)`,
);
