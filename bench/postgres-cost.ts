/**
 * What a pass costs the database, measured around it:
 *
 * - statements: counted in this process by wrapping `pg.Client.prototype.query` (the runtime, its cluster and the
 *   floor all use this module's `pg`; pg_stat_statements needs a server restart to load, which a shared server
 *   does not get). A query call is one round trip; a parameterless text of several statements (`checks; COMMIT`)
 *   counts as each of them. The counter also keeps the statements by kind, for the breakdown.
 * - commits: `xact_commit` of the bench's own database (pg_stat_database, read once its backends exited, so their
 *   statistics are flushed), every transaction including read-only ones.
 * - WAL bytes: `pg_current_wal_lsn()` before and after. WAL is server-wide: what other databases did meanwhile is
 *   in it, so the commits of other databases in the same window are printed beside it as a warning.
 * - backend CPU: user + system ticks of the server processes (/proc/<pid>/stat; the server runs on this machine)
 *   of the bench's database, polled during the pass (a backend that exits between polls loses at most one
 *   interval), and, apart, of the server's background processes (WAL writer, checkpointer, background writer),
 *   which other databases' work also feeds.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** Statements run by this process since the last `reset()`, by kind. */
export interface StatementCount {
  roundTrips: number;
  statements: number;
  byKind: Map<string, number>;
}

const uncounted = new WeakSet<pg.Client>();
const count: StatementCount = { roundTrips: 0, statements: 0, byKind: new Map() };

/** What a statement is, for the breakdown: its verb and table, or what it is for. */
function kindOf(text: string): string {
  const sql = text.replace(/\s+/gu, ' ').trim();
  if (/FOR SHARE/iu.test(sql)) return 'fence check (SELECT ... FOR SHARE)';
  if (/pg_notify/iu.test(sql)) return 'pg_notify';
  if (/pg_advisory_xact_lock\(hashtext\('agentlanes:events/iu.test(sql))
    return 'event log turn (advisory lock)';
  if (/pg_advisory_xact_lock/iu.test(sql)) return 'other advisory lock (cluster lane)';
  if (/^INSERT INTO meta .*'last_cursor'.*RETURNING/iu.test(sql))
    return 'event log turn and end (the end row, locked)';
  if (/^WITH written AS \(INSERT INTO events/iu.test(sql)) return 'INSERT events (and the end row)';
  if (/max\(cursor\)/iu.test(sql)) return "event log's end (SELECT max(cursor))";
  if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/iu.test(sql))
    return sql.split(' ')[0]?.toUpperCase() ?? sql;
  const write = /^(?:WITH .*?\)\s*)?(INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)/iu.exec(sql);
  if (write !== null) return `${write[1]?.split(' ')[0]?.toUpperCase()} ${write[2]}`;
  const read = /^SELECT .*? FROM\s+(\w+)/iu.exec(sql);
  if (read !== null) return `SELECT ${read[1]}`;
  return sql.slice(0, 48);
}

function tally(config: unknown, values: unknown): void {
  const text = typeof config === 'string' ? config : (config as { text?: unknown } | undefined)?.text;
  if (typeof text !== 'string') return;
  const hasValues =
    (Array.isArray(values) && values.length > 0) ||
    (typeof config === 'object' && Array.isArray((config as { values?: unknown }).values));
  const parts = hasValues ? [text] : text.split(';').filter((part) => part.trim() !== '');
  count.roundTrips += 1;
  for (const part of parts) {
    count.statements += 1;
    const kind = kindOf(part);
    count.byKind.set(kind, (count.byKind.get(kind) ?? 0) + 1);
  }
}

/** Start counting (once per process): every query of every `pg.Client` but those marked `uncounted`. */
export function countStatements(): { reset(): void; read(): StatementCount } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
    if (!uncounted.has(this)) tally(args[0], args[1]);
    return original.apply(this, args);
  };
  return {
    reset: () => {
      count.roundTrips = 0;
      count.statements = 0;
      count.byKind = new Map();
    },
    read: () => ({ ...count, byKind: new Map(count.byKind) }),
  };
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** User + system CPU ticks of a process, undefined once it is gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The server's counters at one moment. */
interface ServerSnapshot {
  readonly lsn: string;
  readonly commits: number;
  readonly rollbacks: number;
  readonly otherCommits: number;
}

/** What a pass cost the server. */
export interface ServerCost {
  readonly walBytes: number;
  readonly commits: number;
  readonly rollbacks: number;
  readonly otherCommits: number;
  /** CPU seconds of the bench database's backends; undefined when /proc does not show the server's processes. */
  readonly backendCpuSeconds: number | undefined;
  readonly backgroundCpuSeconds: number | undefined;
}

/** The observer of one database: an uncounted connection to the `postgres` database of the same server. */
export interface ServerWatch {
  /** Start a measured window; `stop()` (once the pass's backends exited, after `settle()`) returns its cost. */
  start(): Promise<{ sample(): Promise<void>; stop(): Promise<ServerCost> }>;
  close(): Promise<void>;
}

/** Watch `database` from a connection to `adminUrl`. */
export async function watchServer(adminUrl: string, database: string): Promise<ServerWatch> {
  const client = new pg.Client({ connectionString: adminUrl });
  uncounted.add(client);
  await client.connect();
  const snapshot = async (): Promise<ServerSnapshot> => {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ lsn: string; commits: string; rollbacks: string; other: string }>(
      `SELECT pg_current_wal_lsn()::text AS lsn,
         (SELECT xact_commit FROM pg_stat_database WHERE datname = $1)::text AS commits,
         (SELECT xact_rollback FROM pg_stat_database WHERE datname = $1)::text AS rollbacks,
         (SELECT coalesce(sum(xact_commit), 0) FROM pg_stat_database
           WHERE datname IS DISTINCT FROM $1 AND datname <> 'postgres')::text AS other`,
      [database],
    );
    const row = rows[0] as { lsn: string; commits: string; rollbacks: string; other: string };
    return {
      lsn: row.lsn,
      commits: Number(row.commits),
      rollbacks: Number(row.rollbacks),
      otherCommits: Number(row.other),
    };
  };
  const processes = async (): Promise<{ backends: number[]; background: number[] }> => {
    const { rows } = await client.query<{ pid: number; datname: string | null; backend_type: string }>(
      'SELECT pid, datname, backend_type FROM pg_stat_activity WHERE pid <> pg_backend_pid()',
    );
    const backgroundTypes = new Set(['walwriter', 'checkpointer', 'background writer']);
    return {
      backends: rows.filter((row) => row.datname === database).map((row) => row.pid),
      background: rows.filter((row) => backgroundTypes.has(row.backend_type)).map((row) => row.pid),
    };
  };
  const visible = cpuTicks(process.pid) !== undefined;
  return {
    async start() {
      const before = await snapshot();
      const baseline = new Map<number, number>();
      const latest = new Map<number, number>();
      const { backends, background } = await processes();
      for (const pid of [...backends, ...background]) baseline.set(pid, cpuTicks(pid) ?? 0);
      const backgroundPids = new Set(background);
      const sample = async (): Promise<void> => {
        for (const pid of (await processes()).backends) {
          const ticks = cpuTicks(pid);
          if (ticks !== undefined) latest.set(pid, ticks);
        }
        for (const pid of backgroundPids) latest.set(pid, cpuTicks(pid) ?? latest.get(pid) ?? 0);
      };
      return {
        sample,
        async stop() {
          const after = await snapshot();
          let backendTicks = 0;
          let backgroundTicks = 0;
          for (const [pid, ticks] of latest) {
            const spent = ticks - (baseline.get(pid) ?? 0);
            if (backgroundPids.has(pid)) backgroundTicks += spent;
            else backendTicks += spent;
          }
          const { rows } = await client.query<{ bytes: string }>(
            'SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS bytes',
            [after.lsn, before.lsn],
          );
          return {
            walBytes: Number(rows[0]?.bytes ?? 0),
            commits: after.commits - before.commits,
            rollbacks: after.rollbacks - before.rollbacks,
            otherCommits: after.otherCommits - before.otherCommits,
            backendCpuSeconds: visible ? backendTicks / ticksPerSecond : undefined,
            backgroundCpuSeconds: visible ? backgroundTicks / ticksPerSecond : undefined,
          };
        },
      };
    },
    close: () => client.end(),
  };
}

/** Resolve once no backend is connected to `database` (so their statistics are flushed), at most `ms`. */
export async function settle(adminUrl: string, database: string, ms = 15_000): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  uncounted.add(client);
  await client.connect();
  try {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
        [database],
      );
      if (rows[0]?.n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}

/** Uncounted: a client of the bench's own bookkeeping (schemas, sizes). */
export function uncountedClient(config: pg.ClientConfig): pg.Client {
  const client = new pg.Client(config);
  uncounted.add(client);
  return client;
}
