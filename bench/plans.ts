/**
 * The plan executor on a 1,000-step plan of zero-latency tools with 10-wide fan-out: `groups` root steps each list
 * 9 items, and a step per group expands over them (`$list-k.items[*].id`), so each group is 10 units.
 * Prints, per run of the plan:
 *   - executor only: the scheduler, placeholder resolution, expansion, validation and events (into a no-op sink);
 *     its time per step is the executor's overhead (the tools take no time);
 *   - through the runtime: `session.executePlan` with the in-memory ledger and the SQLite ledger (FULL), events
 *     and step results recorded.
 *
 *   npm run build && npx tsx bench/plans.ts [groups=100] [maxParallel=10] [rounds=5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  createMemoryLedger,
  createRuntime,
  createSqliteLedger,
  defineTool,
  type Ledger,
} from '../dist/index.js';
import { systemClock } from '../dist/public/clock.js';
import { buildPlanGraph, executePlanSteps, parsePlan, parsePlanOptions } from '../dist/plans/index.js';
import { createToolRegistry } from '../dist/tools/tool-registry.js';
import { scriptedModel } from '../dist/testing/index.js';

const groups = Number(process.argv[2] ?? 100);
const maxParallel = Number(process.argv[3] ?? 10);
const rounds = Number(process.argv[4] ?? 5);

const list = defineTool({
  name: 'list',
  description: 'List 9 items',
  input: z.object({ group: z.number() }),
  execute: ({ group }) => ({
    items: Array.from({ length: 9 }, (_, index) => ({ id: `g${group}-${index}` })),
  }),
});
const touch = defineTool({
  name: 'touch',
  description: 'Touch one item',
  input: z.object({ id: z.string() }),
  execute: ({ id }) => ({ id, touched: true }),
});
const steps = Array.from({ length: groups }, (_, group) => [
  { id: `list-${group}`, tool: 'list', args: { group } },
  { id: `each-${group}`, tool: 'touch', args: { id: `$list-${group}.items[*].id` } },
]).flat();
const units = groups * 10;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function executorOnly(): Promise<number> {
  const plan = parsePlan({ steps });
  const options = parsePlanOptions({ maxParallel });
  const graph = buildPlanGraph(plan);
  const started = performance.now();
  const outcome = await executePlanSteps(
    {
      runId: 'bench',
      sessionKey: 'bench',
      clock: systemClock,
      random: Math.random,
      tools: createToolRegistry([list, touch]),
      options,
      signal: new AbortController().signal,
      emit: () => undefined,
      compensate: () => undefined,
    },
    {
      plan,
      graph,
      options,
      approved: new Set(),
      previous: [],
      alwaysApprove: [],
      onAwaiting: () => undefined,
      onResult: () => undefined,
    },
  );
  const elapsed = performance.now() - started;
  if (outcome.status !== 'completed' || outcome.results.length !== units)
    throw new Error(`plan ${outcome.status}`);
  return elapsed;
}

async function throughRuntime(ledger: Ledger): Promise<number> {
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel([], { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    tools: [list, touch],
  });
  const chat = runtime.session('bench:plans');
  const started = performance.now();
  const result = await chat.executePlan({ steps }, { maxParallel });
  const elapsed = performance.now() - started;
  if (result.status !== 'completed' || result.results.length !== units)
    throw new Error(`plan ${result.status}`);
  await runtime.close();
  return elapsed;
}

function report(label: string, times: number[]): void {
  const ms = median(times);
  const perStep = (ms * 1000) / units;
  console.log(
    `${label.padEnd(28)} ${ms.toFixed(1).padStart(8)} ms / plan   ${Math.round(units / (ms / 1000))
      .toString()
      .padStart(7)} steps/s   ${perStep.toFixed(1).padStart(6)} µs/step`,
  );
}

console.log(
  `plan: ${units} steps (${groups} groups × 10-wide fan-out), maxParallel ${maxParallel}, median of ${rounds}`,
);
await executorOnly(); // warm-up
const executor: number[] = [];
for (let round = 0; round < rounds; round++) executor.push(await executorOnly());
report('executor only (overhead)', executor);

const memory: number[] = [];
for (let round = 0; round < rounds; round++) {
  const ledger = createMemoryLedger();
  memory.push(await throughRuntime(ledger));
  await ledger.close();
}
report('runtime, memory ledger', memory);

const dir = mkdtempSync(join(tmpdir(), 'agentlanes-bench-plans-'));
const sqlite: number[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    const ledger = createSqliteLedger({ path: join(dir, `plans-${round}.db`) });
    sqlite.push(await throughRuntime(ledger));
    await ledger.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
report('runtime, SQLite (FULL)', sqlite);
