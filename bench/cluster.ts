/**
 * The distributed profile: 1, 2 and 3 worker processes (test/cluster/worker-child.ts) on one Postgres schema.
 * For each, every session is a closed loop through a random worker (send, wait for its run to end, next), so a
 * send often reaches a worker that does not hold the session and is forwarded. Prints messages/s, the
 * acknowledgement latency (send() call -> SendResult) p50 / p99, and the takeover time after a SIGKILL (kill ->
 * the killed worker's open run recorded `crashed`), with the workers' lease of 2 s and scan of 250 ms. Then, from the
 * server's statistics of the schema once the workers closed (a backend flushes them when it exits): the forwarded
 * calls (rows inserted into `cluster_requests`) and, per forwarded call, the index scans of `cluster_requests` by id
 * (its answer's reads and polls, its answer's write and its deletion) and of `cluster_workers` (the caller's checks
 * that the owner lives, and the leases' renewals and ownership joins, which do not scale with the calls).
 *
 *   npx tsx bench/cluster.ts [sessions=30] [messagesPerSession=10]
 */
import pg from 'pg';
import { startWorker, type Worker } from '../test/cluster/cluster-driver.js';

const postgresUrl = process.env.AGENTLANES_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';
const sessions = Number(process.argv[2] ?? 30);
const perSession = Number(process.argv[3] ?? 10);

async function sql<Row>(schema: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: postgresUrl, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

interface RequestStats {
  readonly forwarded: number;
  readonly requestScans: number;
  readonly workerScans: number;
}

/** The schema's counters of forwarded calls (see the header), read once every worker's backend exited. */
async function requestStats(schema: string): Promise<RequestStats> {
  // The statistics of a backend reach the server when it exits, shortly after its client closed.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const rows = await sql<{ name: string; inserts: number; scans: number }>(
    'public',
    `SELECT t.relname AS name, t.n_tup_ins::int AS inserts, coalesce(i.idx_scan, 0)::int AS scans
     FROM pg_stat_user_tables t LEFT JOIN pg_stat_user_indexes i ON i.relid = t.relid AND i.indexrelname = t.relname || '_pkey'
     WHERE t.schemaname = $1 AND t.relname IN ('cluster_requests', 'cluster_workers')`,
    [schema],
  );
  const of = (name: string) => rows.find((row) => row.name === name);
  return {
    forwarded: of('cluster_requests')?.inserts ?? 0,
    requestScans: of('cluster_requests')?.scans ?? 0,
    workerScans: of('cluster_workers')?.scans ?? 0,
  };
}

async function startAll(schema: string, count: number): Promise<Worker[]> {
  const options = { calls: [], log: [], onCall: () => undefined };
  const workers = Array.from({ length: count }, (_, index) => startWorker(schema, `w${index}`, options));
  await Promise.all(workers.map((worker) => worker.ready));
  return workers;
}

/** Closed loops over every session through random workers; messages/s and ack latencies. */
async function throughput(workers: readonly Worker[]): Promise<{ perSecond: number; acks: number[] }> {
  const acks: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, session) => {
      for (let index = 0; index < perSession; index++) {
        const worker = workers[Math.floor(Math.random() * workers.length)] as Worker;
        const sentAt = performance.now();
        await worker.call(`bench-${session}`, 'send', { id: `m-${index}`, text: `hello ${index}` });
        acks.push(performance.now() - sentAt);
        await worker.call(`bench-${session}`, 'waitForEnd', { timeoutMs: 30_000 });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: (sessions * perSession) / seconds, acks: acks.sort((a, b) => a - b) };
}

/** Kill the worker that holds a hanging run; the time until a survivor recorded it crashed. */
async function takeover(schema: string, workers: readonly Worker[]): Promise<number> {
  const [victim, survivor] = workers as [Worker, Worker];
  await victim.call('takeover', 'send', { id: 'hang-1', text: 'hang' });
  // Kill once the run is in the ledger (a run not yet written is not a crashed run: its message runs again).
  let runs = await victim.call<unknown[]>('takeover', 'runs');
  while (runs.length === 0) runs = await victim.call<unknown[]>('takeover', 'runs');
  const killedAt = Date.now();
  victim.signal('SIGKILL');
  await victim.exited;
  await survivor.call('takeover', 'waitForEnd', { timeoutMs: 60_000 });
  const [run] = await sql<{ ended_at: string }>(
    schema,
    `SELECT ended_at FROM runs WHERE session_key = 'takeover'`,
  );
  return Number(run?.ended_at) - killedAt;
}

for (const count of [1, 2, 3]) {
  const schema = `bench_cluster_${count}_${process.pid}`;
  const workers = await startAll(schema, count);
  const { perSecond, acks } = await throughput(workers);
  console.log(
    `${count} worker(s): ${perSecond.toFixed(0)} messages/s; ack p50 ${percentile(acks, 0.5).toFixed(1)} ms, ` +
      `p99 ${percentile(acks, 0.99).toFixed(1)} ms (${sessions} sessions x ${perSession} messages)`,
  );
  if (count >= 2) console.log(`  takeover after SIGKILL: ${await takeover(schema, workers)} ms`);
  await Promise.all(workers.map((worker) => worker.close()));
  const stats = await requestStats(schema);
  const per = (count: number): string => (count / Math.max(1, stats.forwarded)).toFixed(1);
  console.log(
    `  ${stats.forwarded} forwarded calls; per call ${per(stats.requestScans)} index scans of cluster_requests, ` +
      `${per(stats.workerScans)} of cluster_workers`,
  );
  await sql('public', `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}
