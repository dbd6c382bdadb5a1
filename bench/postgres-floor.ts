/**
 * The Postgres floor's store: the rows bench/floor-store.ts writes on SQLite (inbox, run, turn per message, and a
 * snapshot per session at the end), written with the bare `pg` client, in one of two ways:
 *
 * - `group`: group commit on one connection (as the runtime's Postgres ledger has). Every write queued in one
 *   event-loop turn goes in one transaction, its rows in one multi-row `INSERT ... SELECT * FROM unnest(...)` per
 *   table; writes queued while a transaction is in flight form the next one. `send()` resolves after the COMMIT of
 *   its inbox row, the run after the COMMIT of its turn row. A batch of one statement runs without BEGIN/COMMIT.
 * - `per-write`: one transaction per write (an autocommit `INSERT`) on a pool of 8 connections (the global lane's
 *   concurrency), so Postgres itself may share a WAL flush between commits that arrive together.
 *
 * Sessions asked for in one event-loop turn are read with one SELECT (in the batch's transaction for `group`).
 */
import pg from 'pg';
import type { FloorStore } from './floor.js';

/** How the floor commits. */
export type PostgresFloorMode = 'group' | 'per-write';

/** Options of the Postgres floor store. */
export interface PostgresFloorOptions {
  readonly connectionString: string;
  /** A schema of its own (created, with its tables, by `open`). */
  readonly schema: string;
  readonly mode: PostgresFloorMode;
}

/** The floor's store, with what `FloorStore.close()` (synchronous) starts: resolves once the pool ended. */
export interface PostgresFloorStore extends FloorStore {
  readonly closed: Promise<void>;
}

const schemaSql = (schema: string): string => `
  CREATE SCHEMA IF NOT EXISTS ${schema};
  CREATE TABLE IF NOT EXISTS ${schema}.sessions (key TEXT PRIMARY KEY, snapshot TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS ${schema}.inbox (session_key TEXT NOT NULL, message_id TEXT NOT NULL, text TEXT NOT NULL,
    status TEXT NOT NULL, received_at BIGINT NOT NULL, PRIMARY KEY (session_key, message_id));
  CREATE TABLE IF NOT EXISTS ${schema}.runs (run_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, status TEXT NOT NULL,
    started_at BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS ${schema}.turns (run_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL)`;

/** One statement per table: every row of the batch for that table, one array parameter per column. */
const insertSql = {
  inbox: `INSERT INTO inbox (session_key, message_id, text, status, received_at)
    SELECT s, m, t, 'pending', r FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS u(s, m, t, r)`,
  runs: `INSERT INTO runs (run_id, session_key, status, started_at)
    SELECT r, s, 'running', t FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(r, s, t)`,
  turns: `INSERT INTO turns (run_id, role, content)
    SELECT r, 'assistant', c FROM unnest($1::text[], $2::text[]) AS u(r, c)`,
  sessions: `INSERT INTO sessions (key, snapshot) SELECT k, s FROM unnest($1::text[], $2::text[]) AS u(k, s)
    ON CONFLICT (key) DO UPDATE SET snapshot = excluded.snapshot`,
} as const;
const selectSql = 'SELECT key, snapshot FROM sessions WHERE key = ANY($1::text[])';

type Table = keyof typeof insertSql;
type Row = readonly (string | number)[];

/** The columns of `rows` as arrays (the parameters of an unnest insert). */
function columns(rows: readonly Row[]): unknown[][] {
  const width = rows[0]?.length ?? 0;
  return Array.from({ length: width }, (_, column) => rows.map((row) => row[column]));
}

/** Create the floor's schema and tables (idempotent). */
export async function openPostgresFloor(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(schemaSql(schema));
  } finally {
    await client.end();
  }
}

/** Snapshot loads asked for in one event-loop turn, resolved from one SELECT. */
type Loads = Map<string, Array<(snapshot: unknown) => void>>;

function settleLoads(loads: Loads, rows: ReadonlyArray<{ key: string; snapshot: string }>): void {
  const found = new Map(rows.map((row) => [row.key, row.snapshot] as const));
  for (const [key, resolvers] of loads) {
    const saved = found.get(key);
    const snapshot: unknown = saved === undefined ? undefined : JSON.parse(saved);
    for (const resolve of resolvers) resolve(snapshot);
  }
}

/** What one group-commit transaction carries. */
interface Batch {
  rows: Map<Table, Row[]>;
  loads: Loads;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

const emptyBatch = (): Batch => ({ rows: new Map(), loads: new Map(), waiters: [] });

/** One transaction: the batch's SELECT, one INSERT per table; no BEGIN/COMMIT when it is one statement. */
async function commitBatch(client: pg.Client, batch: Batch): Promise<void> {
  const statements: Array<() => Promise<unknown>> = [];
  if (batch.loads.size > 0)
    statements.push(async () => {
      const { rows } = await client.query<{ key: string; snapshot: string }>(selectSql, [
        [...batch.loads.keys()],
      ]);
      settleLoads(batch.loads, rows);
    });
  for (const [table, rows] of batch.rows)
    statements.push(() => client.query(insertSql[table], columns(rows)));
  const single = statements.length === 1;
  if (!single) await client.query('BEGIN');
  for (const statement of statements) await statement();
  if (!single) await client.query('COMMIT');
}

/** Group commit on one connection: one transaction per event-loop turn, the next one queued while it runs. */
function groupStore(config: pg.ClientConfig): PostgresFloorStore {
  const client = new pg.Client(config);
  const connected = client.connect();
  let batch = emptyBatch();
  let draining: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    await connected;
    while (batch.rows.size > 0 || batch.loads.size > 0) {
      const current = batch;
      batch = emptyBatch();
      try {
        await commitBatch(client, current);
        for (const waiter of current.waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of current.waiters) waiter.reject(error);
      }
    }
    draining = undefined;
  };
  const schedule = (): void => {
    draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain);
  };
  const write = (table: Table, row: Row, wait: boolean): Promise<void> | undefined => {
    const rows = batch.rows.get(table);
    if (rows === undefined) batch.rows.set(table, [row]);
    else rows.push(row);
    schedule();
    if (!wait) return undefined;
    const waiters = batch.waiters;
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  };
  let closing: Promise<void> | undefined;
  return {
    inbox: (sessionKey, messageId, text) => write('inbox', [sessionKey, messageId, text, Date.now()], true),
    runStarted: (runId, sessionKey) => void write('runs', [runId, sessionKey, Date.now()], false),
    runEnded: (runId, text) => write('turns', [runId, text], true),
    loadSnapshot: (key) =>
      new Promise((resolve) => {
        const resolvers = batch.loads.get(key);
        if (resolvers === undefined) batch.loads.set(key, [resolve]);
        else resolvers.push(resolve);
        schedule();
      }),
    saveSnapshots: (entries) => {
      for (const [key, snapshot] of entries) void write('sessions', [key, JSON.stringify(snapshot)], false);
    },
    close: () => {
      closing ??= (async () => {
        while (draining !== undefined) await draining;
        await client.end();
      })();
    },
    get closed() {
      return closing ?? Promise.resolve();
    },
  };
}

/** One autocommit INSERT per write on a pool of 8; loads of one turn in one SELECT. */
function perWriteStore(config: pg.ClientConfig): PostgresFloorStore {
  const pool = new pg.Pool({ ...config, max: 8 });
  const pending = new Set<Promise<unknown>>();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    const forget = (): void => void pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  };
  const write = (table: Table, row: Row): Promise<void> =>
    track(pool.query(insertSql[table], columns([row])).then(() => undefined));
  let loads: Loads = new Map();
  const loadAll = (): void => {
    const batch = loads;
    loads = new Map();
    void track(
      pool
        .query<{ key: string; snapshot: string }>(selectSql, [[...batch.keys()]])
        .then(({ rows }) => settleLoads(batch, rows)),
    );
  };
  let closing: Promise<void> | undefined;
  return {
    inbox: (sessionKey, messageId, text) => write('inbox', [sessionKey, messageId, text, Date.now()]),
    runStarted: (runId, sessionKey) => void write('runs', [runId, sessionKey, Date.now()]),
    runEnded: (runId, text) => write('turns', [runId, text]),
    loadSnapshot: (key) =>
      new Promise((resolve) => {
        if (loads.size === 0) setImmediate(loadAll);
        const resolvers = loads.get(key);
        if (resolvers === undefined) loads.set(key, [resolve]);
        else resolvers.push(resolve);
      }),
    saveSnapshots: (entries) => {
      if (entries.length === 0) return;
      const rows = entries.map(([key, snapshot]) => [key, JSON.stringify(snapshot)] as const);
      void track(pool.query(insertSql.sessions, columns(rows)));
    },
    close: () => {
      closing ??= (async () => {
        while (pending.size > 0) await Promise.allSettled([...pending]);
        await pool.end();
      })();
    },
    get closed() {
      return closing ?? Promise.resolve();
    },
  };
}

/** The Postgres floor store of `options.mode` (its schema made by `openPostgresFloor` first). */
export function postgresFloorStore(options: PostgresFloorOptions): PostgresFloorStore {
  const config = { connectionString: options.connectionString, options: `-c search_path=${options.schema}` };
  return options.mode === 'group' ? groupStore(config) : perWriteStore(config);
}
