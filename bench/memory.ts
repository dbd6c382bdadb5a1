/**
 * Heap per session: live idle sessions (actor running, nothing queued) and hibernated ones (actor stopped,
 * snapshot kept in the in-memory ledger). Each session gets a configure() override and one message whose run
 * completes, so it has real state. Beside them, the in-memory floor (bench/floor.ts): a session that ran one
 * message, live (its XState actor running) and hibernated (its persisted snapshot kept as JSON on the heap, as the
 * in-memory ledger keeps it). Run with --expose-gc:
 *
 *   npm run build && node --expose-gc --import tsx bench/memory.ts [sessions=100000]
 */
import { createMemoryLedger, createRuntime } from '../dist/index.js';
import { fakeClock, scriptedModel } from '../dist/testing/index.js';
import { createFloor } from './floor.js';

const sessions = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function heap(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const clock = fakeClock({ now: 0 });
const ledger = createMemoryLedger();
const runtime = createRuntime({
  ledger,
  providers: { scripted: scriptedModel(() => ({ text: 'ok' }), { clock, record: false }) },
  model: { provider: 'scripted', model: 'bench' },
  sessions: { hibernateAfterMs: 60_000 },
  clock,
});

const keys = Array.from({ length: sessions }, (_, index) => `telegram:${index}`);
// What a session costs without the record of its messages: configure() only.
const base = heap();
for (const key of keys) await runtime.session(key).configure({ debounceMs: 500 });
const live = heap();
await clock.advance(60_000);
const hibernatedHeap = heap();
const liveAfter = runtime.stats().liveSessions;

// The same again with one message each (the ledger now also holds inbox, run, turns and events).
const withMessage = Array.from({ length: sessions }, (_, index) => `discord:${index}`);
const before = heap();
for (const key of withMessage) await runtime.session(key).send({ id: 'm1', text: 'hello' });
await clock.advance(10);
const liveWithMessage = heap();
await clock.advance(60_000);
const hibernatedWithMessage = heap();

await runtime.close();

// The floor: one message each, then every session hibernated at once.
const floor = createFloor();
const floorBase = heap();
for (const key of keys) await (await floor.session(key).send({ id: 'm1', text: 'hello' })).done;
const floorLive = heap();
floor.hibernateAll();
const floorHibernated = heap();
await floor.close();

const kb = (bytes: number): string => `${(bytes / sessions / 1024).toFixed(2)} KB`;
const ratio = (bytes: number, floorBytes: number): string => `${(bytes / floorBytes).toFixed(1)}x the floor`;
console.log(`memory bench: ${sessions} sessions (in-memory ledger)`);
console.log(
  `  live idle session (configured):      ${kb(live - base)} per session (target <= 5 KB; floor ${kb(floorLive - floorBase)}, ${ratio(live - base, floorLive - floorBase)})`,
);
console.log(
  `  hibernated session (configured):     ${kb(hibernatedHeap - base)} per session (target <= 0.5 KB; floor ${kb(floorHibernated - floorBase)}, ${ratio(hibernatedHeap - base, floorHibernated - floorBase)}; live left: ${liveAfter})`,
);
console.log(
  `  live idle session after one run:     ${kb(liveWithMessage - before)} per session, incl. its ledger record`,
);
console.log(
  `  hibernated session after one run:    ${kb(hibernatedWithMessage - before)} per session, incl. its ledger record`,
);
