import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { createPostgresLedger, type PostgresLedger } from '../../src/ledger/postgres-ledger.js';

/** The test database (PostgreSQL 15 runs on every machine of the project; `AGENTLANES_TEST_POSTGRES` overrides). */
export const postgresUrl = process.env.AGENTLANES_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';

const created: string[] = [];
const prefix = `t_${randomBytes(4).toString('hex')}`;

/**
 * A schema name no other test file uses (created by the ledger that opens it); every schema handed out by this
 * file is dropped once its tests are done.
 */
export function freshSchema(): string {
  const schema = `${prefix}_${created.length + 1}`;
  created.push(schema);
  return schema;
}

/** A Postgres ledger on a fresh schema of the test database. */
export function freshPostgresLedger(options: { readonly schema?: string } = {}): PostgresLedger {
  return createPostgresLedger({ connectionString: postgresUrl, schema: options.schema ?? freshSchema() });
}

/**
 * A Postgres ledger on this test file's own schema, emptied first (every row but the migrations' deleted):
 * cheaper than a schema per test, which migrates each time. Close the ledger before asking for the next one.
 */
export async function emptyPostgresLedger(): Promise<PostgresLedger> {
  fileSchema ??= freshSchema();
  const tables = await rawQuery<{ tablename: string }>(
    fileSchema,
    "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'agentlanes_migrations'",
    [fileSchema],
  );
  if (tables.length > 0) {
    // DELETE, not TRUNCATE: the tables are small, and TRUNCATE replaces their files (a few ms each).
    await rawQuery(fileSchema, tables.map((table) => `DELETE FROM ${table.tablename};`).join(' '));
  }
  return freshPostgresLedger({ schema: fileSchema });
}
let fileSchema: string | undefined;

/** Run one statement on the test database, outside any ledger (damage rows, count them). */
export async function rawQuery<Row = Record<string, unknown>>(
  schema: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: postgresUrl, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (created.length === 0) return;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    for (const schema of created.splice(0)) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
});
