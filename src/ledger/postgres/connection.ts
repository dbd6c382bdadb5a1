import type pgModule from 'pg';
import type { Pool, PoolClient } from 'pg';
import { RuntimeError } from '../../core/index.js';
import type { PostgresAccess } from './access.js';
import { translatePostgresError } from './errors.js';
import { createPostgresEventWriter, type PostgresEventWriter } from './event-writer.js';
import type { PostgresLedgerOptions } from './ledger.js';
import { createPostgresQueue, type PostgresQuery, type PostgresWork } from './queue.js';
import { migratePostgres } from './schema.js';
import { createTurnCache, type TurnCache } from '../sqlite/turn-cache.js';
import type { RefusedCloses } from '../sql/params.js';

/** The Postgres ledger's connection: how its stores read and write, its event write path, and its close. */
export interface PostgresConnection extends PostgresAccess {
  readonly events: PostgresEventWriter;
  /**
   * The latest turns of the sessions this connection wrote or read (see postgres/transcript.ts): kept by its appends,
   * cleared whenever a transaction's work is rolled back.
   */
  readonly turns: TurnCache;
  /** Open (connect and migrate) now rather than at the first read or write; rejects as that first call would. */
  readonly ready: () => Promise<void>;
  /** See `PostgresQueue.unfailed`. */
  readonly unfailed: (writes: readonly Promise<unknown>[]) => boolean;
  /** Write what is buffered, let queued work finish, and end the pool; twice is harmless. */
  close(): Promise<void>;
}

/** Schema names are plain lowercase identifiers, so that they need no quoting anywhere (search_path included). */
/** A schema name both the ledger and the cluster accept: a lowercase identifier of at most 63 characters. */
export const postgresSchemaPattern = /^[a-z_][a-z0-9_]{0,62}$/u;

/** The default schema of the ledger's tables. */
export const defaultPostgresSchema = 'agentlanes';

/** BIGINT columns hold ms timestamps and counters, all far below 2^53: read them as numbers, not strings. */
const int8 = 20;

/** The type parsers of a pool: BIGINT read as a number, every other type as `pg` reads it. */
export function numericInt8Types(pg: typeof pgModule): { getTypeParser: typeof pg.types.getTypeParser } {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
      oid === int8
        ? Number
        : (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(
            oid,
            format,
          )) as typeof pg.types.getTypeParser,
  };
}

/** Check the options at construction: bad ones throw `invalid_input` (never echoing the connection string). */
function checkOptions(options: PostgresLedgerOptions): string {
  if (typeof options.connectionString !== 'string' || options.connectionString === '') {
    throw new RuntimeError('invalid_input', 'the Postgres ledger needs a connectionString');
  }
  const schema = options.schema ?? defaultPostgresSchema;
  if (!postgresSchemaPattern.test(schema)) {
    throw new RuntimeError(
      'invalid_input',
      `schema "${schema}" is not a lowercase identifier (a-z, 0-9, _; at most 63 characters)`,
    );
  }
  return schema;
}

async function createPool(options: PostgresLedgerOptions, schema: string): Promise<Pool> {
  const pg = (await import('pg')).default;
  const idleMs = options.idleInTransactionTimeoutMs ?? 10_000;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: 1,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    options: `-c search_path=${schema} -c idle_in_transaction_session_timeout=${Math.round(idleMs)}`,
    types: numericInt8Types(pg),
  });
  // An idle client the server dropped: the pool discards it and the next batch connects afresh.
  pool.on('error', () => undefined);
  // A client the server ends while it is checked out (the migration's, a batch's) fails its next query; without a
  // listener its 'error' event would also throw out of the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** The pool, opened on first use: connect, migrate, and learn the highest cursor (`seed`). */
interface LazyPool {
  /** Open if not yet (again after a failed attempt); resolves once migrated. */
  readonly open: () => Promise<void>;
  /** A client for one batch. */
  readonly connect: () => Promise<PoolClient>;
  /** End the pool (after an open in flight settled). */
  readonly end: () => Promise<void>;
}

function createLazyPool(
  options: PostgresLedgerOptions,
  schema: string,
  seed: (cursor: number) => void,
): LazyPool {
  let pool: Pool | undefined;
  let opening: Promise<Pool> | undefined;
  const listened = new WeakSet<PoolClient>();
  const open = (): Promise<Pool> =>
    (opening ??= (async () => {
      pool ??= await createPool(options, schema);
      const client = await pool.connect();
      try {
        await migratePostgres(client, schema);
        const highest = await client.query<{ cursor: number | null }>(
          'SELECT max(cursor) AS cursor FROM events',
        );
        seed(highest.rows[0]?.cursor ?? 0);
      } finally {
        client.release();
      }
      return pool;
    })().catch((error: unknown) => {
      opening = undefined;
      throw error;
    }));
  return {
    open: async () => {
      await open();
    },
    connect: async () => {
      const client = await (await open()).connect();
      // A connection the server ends while a batch holds it (an idle-in-transaction timeout after a stall) fails
      // that batch's next query; without a listener its 'error' event would also throw out of the process.
      if (!listened.has(client)) {
        listened.add(client);
        client.on('error', () => undefined);
      }
      return client;
    },
    end: async () => {
      await opening?.catch(() => undefined);
      await pool?.end().catch(() => undefined);
    },
  };
}

/**
 * Open the connection lazily (`createPostgresLedger` returns at once, as the SQLite ledger does): the first batch
 * imports `pg`, connects and migrates; a failure there rejects that batch and the next one tries again.
 */
export function openPostgresConnection(options: PostgresLedgerOptions): PostgresConnection {
  const schema = checkOptions(options);
  const translate = (error: unknown): Error => translatePostgresError(error, options.connectionString);
  const pool = createLazyPool(options, schema, (cursor) => events.seed(cursor));
  const turns = createTurnCache();
  const queue = createPostgresQueue({ connect: pool.connect, translate, rolledBack: () => turns.clear() });
  let closed = false;
  const refusal = (): RuntimeError | undefined =>
    closed ? new RuntimeError('runtime_closed', 'the ledger is closed') : undefined;
  const run = <T>(work: PostgresWork<T>): Promise<T> => {
    const refused = refusal();
    return refused === undefined ? queue.run(work) : Promise.reject(refused);
  };
  const refusedCloses: RefusedCloses = new Set();
  const events = createPostgresEventWriter({ write: run, refusal, refusedCloses });
  // Reads open no transaction of their own (see `PostgresWork.readOnly`).
  const read = <T>(work: PostgresWork<T>): Promise<T> =>
    run(Object.assign((query: PostgresQuery) => work(query), { readOnly: true }));
  const readEventLog = <T>(work: PostgresWork<T>): Promise<T> => {
    if (refusal() === undefined) void events.flush().catch(() => undefined);
    return read(work);
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    events.stop();
    const last = events.flush();
    closed = true;
    try {
      await last;
    } finally {
      await queue.idle();
      await pool.end();
    }
  };
  const ready = async (): Promise<void> => {
    try {
      await pool.open();
    } catch (error) {
      throw translate(error);
    }
  };
  const { unfailed, failureOf } = queue;
  const tied = { unfailed, failureOf, refusedCloses };
  return { write: run, read, readEventLog, events, turns, ready, close, schema, ...tied };
}
