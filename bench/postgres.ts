/**
 * The Postgres profile against its floor (issue 27): the workload of bench/ledger.ts (many sessions as closed
 * loops, each message its own run, global concurrency 8), in one process, one pass after the other:
 *
 *   1. the Postgres floor, group commit (bench/postgres-floor.ts: the floor's 3 rows per message with the bare `pg`
 *      client, one transaction per event-loop turn, send() acknowledged after the COMMIT of its inbox row);
 *   2. the Postgres floor, one transaction per write (autocommit INSERTs on a pool of 8);
 *   3. the runtime on the Postgres ledger as one process (`cluster: false`);
 *   4. the runtime as a one-worker cluster (ownership claims, fenced writes, events numbered in the writing
 *      transaction);
 *   5. the group-commit floor again: ratios are to the mean of 1 and 5.
 *
 * Every pass runs on a schema of its own in a database of its own (`agentlanes_bench`, created when missing, so that
 * its commit count is the pass's alone), after a warm-up on the same schema (200 sessions x 2 messages: JIT,
 * connections, the migration), so the measured window holds no DDL. For each it prints messages/s and the ratio to
 * the group-commit floor, the send() acknowledgement p50 / p99, statements (and round trips) per message, commits
 * per message, WAL bytes per message, the backends' CPU per message, and the bytes the rows took; then the runtime
 * passes' statements by kind, and a projection for 1, 4 and 16 workers on a 16-core database (see `project`).
 * How each figure is taken: bench/postgres-cost.ts.
 *
 *   npm run build && npx tsx bench/postgres.ts [sessions=1000] [messagesPerSession=5] [rounds=1]
 *   BENCH_ONLY=runtime | cluster | floor: those passes alone (for a CPU profile); AGENTLANES_BENCH_POSTGRES: the URL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createRuntime } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { argument, closedLoop, p50p99, type LoopResult, type Workload } from './closed-loop.js';
import { createFloor } from './floor.js';
import { openPostgresFloor, postgresFloorStore, type PostgresFloorMode } from './postgres-floor.js';
import {
  countStatements,
  settle,
  uncountedClient,
  watchServer,
  type ServerCost,
  type StatementCount,
} from './postgres-cost.js';

const benchUrl =
  process.env.AGENTLANES_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/agentlanes_bench';
const database = decodeURIComponent(new URL(benchUrl).pathname.slice(1));
const adminUrl = Object.assign(new URL(benchUrl), { pathname: '/postgres' }).toString();
const workload: Workload = { sessions: argument(2, 1_000), perSession: argument(3, 5) };
const rounds = argument(4, 1);
const warmUp: Workload = { sessions: 200, perSession: 2 };
const concurrency = 8;
const counter = countStatements();

async function admin<Row>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = uncountedClient({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** One thing measured: how to run the workload on a schema (keys prefixed), closing what it opened. */
interface Target {
  readonly name: string;
  readonly prepare: (schema: string) => Promise<void>;
  readonly run: (
    schema: string,
    prefix: string,
    sessions: Workload,
    measure?: () => Promise<void>,
  ) => Promise<LoopResult>;
}

function floorTarget(mode: PostgresFloorMode): Target {
  return {
    name: mode === 'group' ? 'floor, group commit' : 'floor, transaction per write',
    prepare: (schema) => openPostgresFloor(benchUrl, schema),
    async run(schema, prefix, sessions, measure) {
      const store = postgresFloorStore({ connectionString: benchUrl, schema, mode });
      const floor = createFloor({ concurrency, store });
      const result = await closedLoop(sessions, async (session, message, acknowledged) => {
        const { done } = await floor
          .session(`${prefix}:${session}`)
          .send({ id: `m${message}`, text: 'hello, where is my parcel?' });
        acknowledged();
        await done;
      });
      await measure?.();
      await floor.close();
      await store.closed;
      return result;
    },
  };
}

function runtimeTarget(cluster: boolean): Target {
  return {
    name: cluster ? 'runtime, 1-worker cluster' : 'runtime, one process',
    prepare: () => Promise.resolve(),
    async run(schema, prefix, sessions, measure) {
      const runtime = createRuntime({
        ledger: { postgres: { connectionString: benchUrl, schema } },
        cluster: cluster ? { leaseMs: 10_000 } : false,
        providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
        model: { provider: 'scripted', model: 'bench' },
        queue: { mode: 'followup', debounceMs: 0 },
        globalLane: { concurrency },
      });
      const result = await closedLoop(sessions, async (session, message, acknowledged) => {
        const chat = runtime.session(`${prefix}:${session}`);
        await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
        acknowledged();
        const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
        if (ended.status !== 'ended' || ended.run.status !== 'completed')
          throw new Error(`run did not complete: ${JSON.stringify(ended)}`);
      });
      await measure?.();
      await runtime.close();
      return result;
    },
  };
}

/** The bytes of a schema's tables (indexes and TOAST included). */
async function schemaBytes(schema: string): Promise<number> {
  const rows = await admin<{ bytes: string }>(
    benchUrl,
    `SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::text AS bytes
       FROM pg_tables WHERE schemaname = $1`,
    [schema],
  );
  return Number(rows[0]?.bytes ?? 0);
}

/** What one measured pass gave. */
interface Pass extends LoopResult {
  readonly name: string;
  readonly cost: ServerCost;
  readonly statements: StatementCount;
  readonly bytes: number;
}

/** Warm up on a fresh schema, then the measured pass with the server watched; drops the schema. */
async function pass(target: Target): Promise<Pass> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await target.prepare(schema);
  await target.run(schema, 'warm', warmUp);
  await settle(adminUrl, database);
  const bytesBefore = await schemaBytes(schema);
  const watch = await watchServer(adminUrl, database);
  const window = await watch.start();
  counter.reset();
  const timer = setInterval(() => void window.sample().catch(() => undefined), 500);
  const result = await target.run(schema, 'bench', workload, async () => {
    clearInterval(timer);
    await window.sample();
  });
  const statements = counter.read();
  await settle(adminUrl, database);
  const cost = await window.stop();
  await watch.close();
  const bytes = (await schemaBytes(schema)) - bytesBefore;
  await admin(benchUrl, `DROP SCHEMA ${schema} CASCADE`);
  return { ...result, name: target.name, cost, statements, bytes };
}

const perMessage = (value: number, pass: Pass, digits = 2): string => (value / pass.messages).toFixed(digits);

function cpuPerMessage(pass: Pass): string {
  const { backendCpuSeconds, backgroundCpuSeconds } = pass.cost;
  if (backendCpuSeconds === undefined || backgroundCpuSeconds === undefined) return 'n/a (no /proc)';
  const micro = (seconds: number): string => Math.round((seconds * 1e6) / pass.messages).toString();
  return `${micro(backendCpuSeconds)} + ${micro(backgroundCpuSeconds)}`;
}

function printPasses(passes: readonly Pass[], floor: number): void {
  console.log(
    '  pass                           messages/s  / floor  ack p50 / p99                stmts/msg (trips)  commits/msg  WAL B/msg  backend+bg CPU us/msg  table B/msg',
  );
  for (const p of passes) {
    const ratio = (p.perSecond / floor).toFixed(3);
    console.log(
      `  ${p.name.padEnd(30)} ${Math.round(p.perSecond).toString().padStart(10)}  ${ratio.padStart(7)}  ${p50p99(p.acks).padEnd(27)}  ` +
        `${`${perMessage(p.statements.statements, p)} (${perMessage(p.statements.roundTrips, p)})`.padEnd(17)}  ` +
        `${perMessage(p.cost.commits, p, 3).padStart(11)}  ${Math.round(p.cost.walBytes / p.messages)
          .toString()
          .padStart(9)}  ` +
        `${cpuPerMessage(p).padStart(21)}  ${Math.round(p.bytes / p.messages)
          .toString()
          .padStart(11)}`,
    );
    if (p.cost.rollbacks > 0) console.log(`    (${p.cost.rollbacks} rollbacks)`);
    if (p.cost.otherCommits > 0)
      console.log(
        `    warning: other databases committed ${p.cost.otherCommits} times meanwhile (their WAL is in WAL B/msg)`,
      );
  }
}

function printKinds(p: Pass): void {
  const kinds = [...p.statements.byKind].sort((a, b) => b[1] - a[1]);
  console.log(`  ${p.name}: statements per message by kind`);
  for (const [kind, n] of kinds.slice(0, 24)) console.log(`    ${perMessage(n, p).padStart(6)}  ${kind}`);
}

/**
 * A projection, not a measurement: N workers, each on its own machine at the measured one-worker rate, every
 * message reaching its session's owner (no forwarding), against a 16-core database that spends on each message the
 * CPU its processes spent here (backends + background) and scales linearly with its cores. Throughput is the lesser
 * of N x the worker's rate and 16 / (database CPU seconds per message). It leaves out what does not scale with
 * cores: the event log's advisory lock (event-writing transactions take turns across every worker), WAL flushes,
 * lock waits, the network between workers and the database.
 */
function project(p: Pass): void {
  const { backendCpuSeconds, backgroundCpuSeconds } = p.cost;
  if (backendCpuSeconds === undefined || backgroundCpuSeconds === undefined) {
    console.log('  projection: no CPU figure (the server is not visible in /proc), none made');
    return;
  }
  const cpu = (backendCpuSeconds + backgroundCpuSeconds) / p.messages;
  const database16 = 16 / cpu;
  const cells = [1, 4, 16].map((workers) => {
    const bound = Math.min(workers * p.perSecond, database16);
    return `${workers}: ${Math.round(bound)}/s (${bound === database16 ? 'database-bound' : 'worker-bound'})`;
  });
  console.log(
    `  projection (${p.name}; ${Math.round(cpu * 1e6)} us of database CPU/message, a 16-core database: ${Math.round(database16)}/s): workers ${cells.join(', ')}`,
  );
}

async function ensureDatabase(): Promise<void> {
  const found = await admin(adminUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (found.length === 0) await admin(adminUrl, `CREATE DATABASE ${pg.escapeIdentifier(database)}`);
}

function selected(): Target[] {
  const only = process.env.BENCH_ONLY ?? '';
  if (only === 'runtime') return [runtimeTarget(false)];
  if (only === 'cluster') return [runtimeTarget(true)];
  if (only === 'floor') return [floorTarget('group')];
  if (only !== '') throw new Error(`BENCH_ONLY must be runtime, cluster or floor, not ${only}`);
  return [
    floorTarget('group'),
    floorTarget('per-write'),
    runtimeTarget(false),
    runtimeTarget(true),
    floorTarget('group'),
  ];
}

await ensureDatabase();
console.log(
  `postgres bench: ${workload.sessions} sessions x ${workload.perSession} messages, each its own run, concurrency ${concurrency}; ` +
    'statements counted in this process by wrapping pg.Client.prototype.query (pg_stat_statements is not loaded); ' +
    'commits = xact_commit of the bench database; CPU = /proc ticks of its backends + the WAL writer, checkpointer and background writer',
);
for (let round = 1; round <= rounds; round++) {
  const passes: Pass[] = [];
  for (const target of selected()) passes.push(await pass(target));
  const floors = passes.filter((p) => p.name === 'floor, group commit');
  const floor = floors.reduce((sum, p) => sum + p.perSecond, 0) / Math.max(1, floors.length);
  console.log(
    `round ${round}: group-commit floor ${Math.round(floor)} messages/s (mean of ${floors.map((p) => Math.round(p.perSecond)).join(' and ')})`,
  );
  printPasses(passes, floor);
  for (const p of passes) if (p.name.startsWith('runtime')) printKinds(p);
  for (const p of passes) if (p.name === 'runtime, 1-worker cluster' || p === floors[0]) project(p);
}
