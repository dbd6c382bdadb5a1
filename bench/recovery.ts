/**
 * Recovery after a crash: a SQLite ledger holds many runs left `running` (a runtime whose model calls hang is
 * abandoned with its ledger closed under it, as a SIGKILL leaves the file); a fresh runtime opens it, resumes every
 * run and answers. Prints the time until startup recovery is done (each run's `run.resumed` recorded, its session
 * hydrated holding it) and until every resumed run completed.
 *
 *   npm run build && npx tsx bench/recovery.ts [runs=1000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { createRuntime, createSqliteLedger } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { argument } from './closed-loop.js';

const count = argument(2, 1_000);
const dir = mkdtempSync(join(tmpdir(), 'agentlanes-recovery-'));
const path = join(dir, 'ledger.db');
const keys = Array.from({ length: count }, (_, index) => `crash:${index}`);

/** Leave `count` runs open in the file: every session's run waits on a model call that never answers. */
async function leaveRunsOpen(): Promise<void> {
  const ledger = createSqliteLedger({ path });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(() => ({ hang: true }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    globalLane: { concurrency: count },
    onError: () => undefined,
  });
  await Promise.all(keys.map((key) => runtime.session(key).send({ id: 'm1', text: 'where is my parcel?' })));
  while ((await ledger.listOpenRuns()).length < count) await pause(10); // polling the file, not timing
  await ledger.close(); // the "crash": the runtime is abandoned, never closed
}

await leaveRunsOpen();
const started = performance.now();
const ledger = createSqliteLedger({ path });
const runtime = createRuntime({
  ledger,
  providers: { scripted: scriptedModel(() => ({ text: 'it is on its way' }), { record: false }) },
  model: { provider: 'scripted', model: 'bench' },
  globalLane: { concurrency: 64 },
});
// Every run's run.resumed is recorded by startup recovery before its session hydrates and goes on.
let resumed = 0;
let recovered = 0;
const stop = new AbortController();
const counting = (async () => {
  for await (const event of runtime.events({ after: 'now', signal: stop.signal })) {
    if (event.type !== 'run.resumed' || ++resumed < count) continue;
    recovered = performance.now() - started;
    return;
  }
})();
while ((await countCompleted()) < count) await pause(20); // polling the file, not timing
const ended = performance.now() - started;
await counting;
stop.abort();
await runtime.close();
rmSync(dir, { recursive: true, force: true });
console.log(`recovery bench: ${count} runs left open by a crash on SQLite (FULL)`);
console.log(`  every run's run.resumed recorded: ${recovered.toFixed(0)} ms`);
console.log(`  every resumed run completed: ${ended.toFixed(0)} ms`);

async function countCompleted(): Promise<number> {
  let done = 0;
  for (const key of keys) {
    const runs = await ledger.listRuns(key);
    if (runs[0]?.status === 'completed') done++;
  }
  return done;
}
