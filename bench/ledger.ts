/**
 * The runtime benchmark on the SQLite ledger (synchronous FULL, group commit): many sessions as closed loops,
 * each message its own run. The durable floor (bench/floor.ts with 3 rows per message group-committed on SQLite)
 * runs the same workload in the same process, before and after the runtime. Prints throughput and its ratio to
 * the floor, send() acknowledgement latency (the message is durable when send() resolves) and bytes on disk per
 * message, for both.
 *
 *   npm run build && npx tsx bench/ledger.ts [sessions=10000] [messagesPerSession=5] [synchronous=full]
 *   BENCH_ONLY=runtime node --cpu-prof --import tsx bench/ledger.ts   (one pass only, to profile it)
 *   BENCH_TOP=30 prints that many statement kinds in a one-pass run (default 10); BENCH_CONCURRENCY=16 sets the
 *   global lane's concurrency of both passes (default 8: COMMITs per message follow it, see bench/README.md).
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'agentlanes-bench-'));
let files = 0;

/** What one pass measured, with the bytes its database took on disk and the statements it ran. */
interface Pass extends LoopResult {
  bytesPerMessage: number;
  statements: Map<string, number>;
}

/**
 * Statements run, by kind, counted at the bench level: better-sqlite3's Database.prototype.exec and the run / get /
 * all / iterate methods of every prepared statement (their prototype, taken from a first prepare) are wrapped, so
 * the ledger's own statements, the transactions better-sqlite3 opens for `db.transaction` (BEGIN, SAVEPOINT,
 * RELEASE, COMMIT are prepared statements there) and pragmas all count. The same wrappers count the floor.
 */
let counted = new Map<string, number>();
function kindOf(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  const words = text.split(' ');
  const verb = (words[0] ?? '').toUpperCase();
  if (verb === 'SAVEPOINT' || verb === 'RELEASE') return verb;
  if (verb === 'ROLLBACK' || verb === 'COMMIT' || verb === 'BEGIN' || verb === 'PRAGMA') return text;
  return text.length > 110 ? `${text.slice(0, 107)}...` : text;
}
/** Kinds by SQL text, so that counting costs a map lookup (a first version's regex took 5% of the runtime pass). */
const kinds = new Map<string, string>();
function count(sql: string): void {
  let kind = kinds.get(sql);
  if (kind === undefined) kinds.set(sql, (kind = kindOf(sql)));
  counted.set(kind, (counted.get(kind) ?? 0) + 1);
}
function countStatements(): void {
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statement[method] as (...args: unknown[]) => unknown;
    statement[method] = function (this: { source: string }, ...args: unknown[]) {
      count(this.source);
      return original.apply(this, args);
    };
  }
  const database = Database.prototype as unknown as Record<string, unknown>;
  const exec = database.exec as (this: Database.Database, sql: string) => Database.Database;
  database.exec = function (this: Database.Database, sql: string) {
    count(sql);
    return exec.call(this, sql);
  };
}
countStatements();
/** Start counting a pass's statements afresh; the map filled from now on. */
function startCounting(): Map<string, number> {
  counted = new Map();
  return counted;
}
/** Statements and commits per message, and the top kinds. */
function statementReport(statements: Map<string, number>, messages: number, top = 10): string[] {
  const total = [...statements.values()].reduce((sum, n) => sum + n, 0);
  const commits = statements.get('COMMIT') ?? 0;
  const lines = [
    `${(total / messages).toFixed(2)} statements per message, ${(commits / messages).toFixed(3)} commits per message`,
  ];
  const kinds = [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [kind, n] of kinds) lines.push(`    ${(n / messages).toFixed(3)}  ${kind}`);
  return lines;
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
  const statements = startCounting();
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
  return { ...result, statements, bytesPerMessage: bytesOnDisk(path) / result.messages };
}

/** One pass of the durable floor on a fresh SQLite file. */
async function floorPass(sessions: Workload): Promise<Pass> {
  const path = join(dir, `floor-${++files}.db`);
  const statements = startCounting();
  const floor = createFloor({ concurrency, store: sqliteFloorStore({ path, synchronous }) });
  const result = await closedLoop(sessions, async (session, message, acknowledged) => {
    const chat = floor.session(`bench:${session}`);
    const { done } = await chat.send({ id: `m${message}`, text: 'hello, where is my parcel?' });
    acknowledged();
    await done;
  });
  await floor.close();
  return { ...result, statements, bytesPerMessage: bytesOnDisk(path) / result.messages };
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
  console.log(
    '  statements counted by wrapping better-sqlite3 (Database.prototype.exec, Statement run/get/all/iterate):',
  );
  const [runtimeTotals, ...runtimeKinds] = statementReport(measured.statements, measured.messages);
  console.log(`  runtime: ${runtimeTotals} (targets <= 6 and <= 0.15)`);
  for (const line of runtimeKinds) console.log(line);
  console.log(`  floor: ${statementReport(floorBefore.statements, floorBefore.messages, 0)[0]}`);
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
  const top = Number(process.env.BENCH_TOP ?? 10);
  for (const line of statementReport(result.statements, result.messages, top)) console.log(`  ${line}`);
}
rmSync(dir, { recursive: true, force: true });
