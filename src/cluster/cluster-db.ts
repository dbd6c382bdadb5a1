import type pgModule from 'pg';
import type { Client, Pool, PoolClient } from 'pg';
import { RuntimeError } from '../core/index.js';
import { numericInt8Types, postgresSchemaPattern, translatePostgresError } from '../ledger/index.js';
import { migrateCluster } from './cluster-schema.js';

/** Where the cluster's tables live: the ledger's database and schema. */
export interface ClusterDatabaseOptions {
  readonly connectionString: string;
  /** @default 'agentlanes' */
  readonly schema?: string | undefined;
  /** How long a statement waits for a connection (a new one, or one of the pool's when all are busy). @default 5000 */
  readonly connectTimeoutMs?: number | undefined;
  /** The pool's connections. @default 4 */
  readonly poolSize?: number | undefined;
}

/** One statement with positional parameters. */
export type ClusterQuery = <Row = Record<string, unknown>>(
  text: string,
  values?: readonly unknown[],
) => Promise<{ readonly rows: Row[]; readonly rowCount: number }>;

/** The cluster's own connections (never the ledger's queue: a lease must renew while the ledger is busy). */
export interface ClusterDatabase {
  readonly schema: string;
  readonly connectionString: string;
  /** Run one statement on a pooled connection (autocommit). */
  readonly query: ClusterQuery;
  /** Run `work` in one transaction; rolled back when it throws. */
  transaction<T>(work: (query: ClusterQuery) => Promise<T>): Promise<T>;
  /** A dedicated connection (the doorbell's LISTEN), with the schema's search path. */
  connectListener(): Promise<Client>;
  close(): Promise<void>;
}

/** The `pg` module, imported when the cluster opens (an optional peer dependency). */
type PgModule = typeof pgModule;

function connectionConfig(options: ClusterDatabaseOptions, schema: string, pg: PgModule) {
  return {
    connectionString: options.connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    options: `-c search_path=${schema} -c idle_in_transaction_session_timeout=10000`,
    types: numericInt8Types(pg),
  };
}

function queryOn(client: Pool | PoolClient): ClusterQuery {
  return async <Row>(text: string, values: readonly unknown[] = []) => {
    const result = await client.query(text, [...values]);
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  };
}

/** Open the cluster's pool on the ledger's schema and migrate its tables. Failures are `ledger_unavailable`. */
export async function openClusterDatabase(options: ClusterDatabaseOptions): Promise<ClusterDatabase> {
  const schema = options.schema ?? 'agentlanes';
  if (!postgresSchemaPattern.test(schema))
    throw new RuntimeError('invalid_input', `schema "${schema}" is not a lowercase identifier`);
  const translate = (error: unknown): Error => translatePostgresError(error, options.connectionString);
  const pg = (await import('pg')).default;
  const config = connectionConfig(options, schema, pg);
  const pool = new pg.Pool({ ...config, max: options.poolSize ?? 4 });
  // A client the server dropped (a stall past the idle-in-transaction timeout) emits 'error', checked out or not:
  // its query rejects anyway, so the event itself must not crash the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    const client = await pool.connect();
    try {
      await migrateCluster(client, schema);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw translate(error);
  }
  const pooled = queryOn(pool);
  return {
    schema,
    connectionString: options.connectionString,
    query: async <Row>(text: string, values?: readonly unknown[]) => {
      try {
        return await pooled<Row>(text, values);
      } catch (error) {
        throw translate(error);
      }
    },
    async transaction(work) {
      const client = await pool.connect().catch((error: unknown) => Promise.reject(translate(error)));
      try {
        await client.query('BEGIN');
        const value = await work(queryOn(client));
        await client.query('COMMIT');
        client.release();
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        throw translate(error);
      }
    },
    async connectListener() {
      const client = new pg.Client(config);
      client.on('error', () => undefined);
      await client.connect().catch((error: unknown) => Promise.reject(translate(error)));
      return client;
    },
    close: () => pool.end().catch(() => undefined),
  };
}
