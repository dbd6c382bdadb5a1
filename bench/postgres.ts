/**
 * The per-message cost of the Postgres profile next to SQLite: the workload of bench/ledger.ts (many sessions as
 * closed loops, each message its own run, global concurrency 8) on three ledgers in one process, one after the
 * other: SQLite (synchronous FULL), Postgres as one process (`cluster: false`), and Postgres as a one-worker
 * cluster (ownership claims, fenced writes, events numbered in the writing transaction). Prints messages/s, the
 * wall time per message, the send() acknowledgement (durable) p50 / p99, and the bytes each message left in the
 * database (SQLite: the file and its WAL; Postgres: the schema's tables with their indexes and TOAST).
 *
 *   npm run build && npx tsx bench/postgres.ts [sessions=2000] [messagesPerSession=5]
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createRuntime, type RuntimeOptions } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { argument, closedLoop, p50p99, rate, type LoopResult, type Workload } from './closed-loop.js';

const postgresUrl = process.env.AGENTLANES_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';
const workload: Workload = { sessions: argument(2, 2_000), perSession: argument(3, 5) };
const dir = mkdtempSync(join(tmpdir(), 'agentlanes-bench-pg-'));

async function sql<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** One ledger under test: the runtime options for it, and the bytes it holds once the pass is over (then removed). */
interface Target {
  readonly name: string;
  readonly options: () => Pick<RuntimeOptions, 'ledger' | 'cluster'>;
  readonly bytes: () => Promise<number>;
}

function sqliteTarget(): Target {
  const path = join(dir, 'ledger.db');
  return {
    name: 'SQLite (FULL)',
    options: () => ({ ledger: { path, synchronous: 'full' } }),
    bytes: () => {
      const files = [path, `${path}-wal`];
      const size = files.filter(existsSync).reduce((sum, file) => sum + statSync(file).size, 0);
      for (const file of [...files, `${path}-shm`, `${path}-lock`]) rmSync(file, { force: true });
      return Promise.resolve(size);
    },
  };
}

function postgresTarget(name: string, cluster: boolean): Target {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  return {
    name,
    options: () => ({
      ledger: { postgres: { connectionString: postgresUrl, schema } },
      cluster: cluster ? { leaseMs: 10_000 } : false,
    }),
    bytes: async () => {
      const rows = await sql<{ bytes: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::text AS bytes
           FROM pg_tables WHERE schemaname = $1 AND tablename NOT LIKE '%migrations'`,
        [schema],
      );
      await sql(`DROP SCHEMA ${schema} CASCADE`);
      return Number(rows[0]?.bytes ?? 0);
    },
  };
}

/** One pass: a fresh runtime on the target, the closed loops, then the bytes per message. */
async function pass(target: Target, sessions: Workload): Promise<LoopResult & { bytesPerMessage: number }> {
  const runtime = createRuntime({
    ...target.options(),
    providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    queue: { mode: 'followup', debounceMs: 0 },
    globalLane: { concurrency: 8 },
  });
  const result = await closedLoop(sessions, async (session, message, acknowledged) => {
    const chat = runtime.session(`bench:${session}`);
    await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    acknowledged();
    const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
    if (ended.status !== 'ended' || ended.run.status !== 'completed')
      throw new Error(`run did not complete: ${JSON.stringify(ended)}`);
  });
  await runtime.close();
  return { ...result, bytesPerMessage: (await target.bytes()) / result.messages };
}

const { sessions, perSession } = workload;
console.log(`postgres bench: ${sessions} sessions x ${perSession} messages, each its own run, concurrency 8`);
console.log(
  '  ledger                        messages/s   ms/message   ack p50 / p99              bytes/message',
);
for (const make of [
  () => sqliteTarget(),
  () => postgresTarget('Postgres, one process', false),
  () => postgresTarget('Postgres, 1-worker cluster', true),
]) {
  // A short warm-up pass on its own target (JIT, connections), then the measured one.
  await pass(make(), { sessions: 200, perSession: 2 });
  const target = make();
  const result = await pass(target, workload);
  console.log(
    `  ${target.name.padEnd(29)} ${rate(result.perSecond).padStart(18)}   ${(1000 / result.perSecond).toFixed(3).padStart(8)}   ${p50p99(result.acks).padEnd(26)} ${Math.round(result.bytesPerMessage)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
