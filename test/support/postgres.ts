import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPostgresLedger, type PostgresLedger } from '../../src/ledger/postgres/ledger.js';

/**
 * This run's own database, created by test/support/postgres-global-setup.ts on the configured server, the
 * machine's or an embedded one, and dropped with everything in it once the run ends.
 */
export const postgresUrl = inject('postgresUrl');

let schemaCount = 0;
const prefix = `t_${randomBytes(4).toString('hex')}`;

/**
 * A schema name no other test file uses (created by the ledger that opens it); the run's database, and every
 * schema in it, is dropped at the end of the run.
 */
export function freshSchema(): string {
  schemaCount += 1;
  return `${prefix}_${schemaCount}`;
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
