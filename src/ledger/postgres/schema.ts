import type { PoolClient } from 'pg';
import { RuntimeError } from '../../core/index.js';

/**
 * The Postgres ledger's schema changes, in order; the `agentlanes_migrations` table records which were applied.
 * A shipped migration is never edited: a change is a new entry at the end. JSON columns are TEXT (as in SQLite)
 * so that a row damaged by hand is read, and reported, the same way by both ledgers.
 */
export const postgresMigrations: readonly string[] = [
  `
  CREATE TABLE sessions (
    session_key TEXT PRIMARY KEY,
    override TEXT NOT NULL,
    snapshot TEXT,
    epoch BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    tool_policy TEXT
  );
  CREATE TABLE inbox (
    session_key TEXT NOT NULL,
    ord BIGINT NOT NULL,
    message_id TEXT NOT NULL,
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    accepted_at BIGINT NOT NULL,
    sender_id TEXT,
    channel TEXT,
    thread TEXT,
    run_id TEXT,
    summary TEXT,
    parts TEXT,
    PRIMARY KEY (session_key, ord)
  );
  CREATE INDEX inbox_by_message ON inbox (session_key, message_id, ord);
  CREATE INDEX inbox_to_run ON inbox (session_key, ord) WHERE status IN ('pending', 'steered');
  CREATE INDEX inbox_unknown_status ON inbox (session_key, ord)
    WHERE status NOT IN ('pending', 'steered', 'collected', 'consumed', 'dropped', 'cancelled');
  CREATE TABLE runs (
    id BIGSERIAL UNIQUE,
    run_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    message_ids TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    error_code TEXT,
    error_message TEXT,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost DOUBLE PRECISION,
    text TEXT NOT NULL,
    parent_run_id TEXT,
    parent_call_id TEXT
  );
  CREATE INDEX runs_by_session ON runs (session_key, id);
  CREATE INDEX runs_open ON runs (id) WHERE status = 'running';
  CREATE INDEX runs_paused ON runs (id) WHERE status IN ('awaiting_approval', 'awaiting_tool_results');
  CREATE TABLE turns (
    id BIGSERIAL PRIMARY KEY,
    session_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    at BIGINT NOT NULL,
    extra TEXT
  );
  CREATE INDEX turns_by_session ON turns (session_key, id);
  CREATE INDEX turns_by_run ON turns (run_id, id);
  CREATE TABLE session_forks (
    session_key TEXT PRIMARY KEY,
    parent_key TEXT NOT NULL,
    turns BIGINT NOT NULL,
    up_to_run_id TEXT,
    at BIGINT NOT NULL
  );
  CREATE TABLE events (
    cursor BIGINT PRIMARY KEY,
    session_key TEXT NOT NULL,
    seq BIGINT NOT NULL,
    type TEXT NOT NULL,
    run_id TEXT,
    at BIGINT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX events_by_session ON events (session_key, cursor);
  CREATE INDEX events_by_time ON events (at);
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE seq_marks (session_key TEXT PRIMARY KEY, last_seq BIGINT NOT NULL);
  CREATE TABLE auth_profiles (profile_id TEXT PRIMARY KEY, state TEXT NOT NULL, updated_at BIGINT NOT NULL);
  CREATE TABLE tool_calls (
    run_id TEXT NOT NULL,
    turn BIGINT NOT NULL,
    position BIGINT NOT NULL,
    session_key TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    decision TEXT,
    remember TEXT,
    result TEXT,
    requested_at BIGINT NOT NULL,
    resolved_at BIGINT,
    PRIMARY KEY (run_id, turn, position)
  );
  CREATE INDEX tool_calls_remembered ON tool_calls (session_key, remember, tool) WHERE remember IS NOT NULL;
  CREATE TABLE compensations (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    session_key TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT,
    result TEXT,
    status TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    recorded_at BIGINT NOT NULL,
    undone_at BIGINT,
    PRIMARY KEY (run_id, seq)
  );
  CREATE TABLE plans (
    run_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    plan TEXT NOT NULL,
    options TEXT NOT NULL,
    approved_steps TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE TABLE plan_steps (
    run_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    success SMALLINT NOT NULL,
    data TEXT,
    error_code TEXT,
    error_message TEXT,
    execution_time DOUBLE PRECISION NOT NULL,
    retries BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, step_id),
    UNIQUE (run_id, seq)
  );
  CREATE TABLE consumers (
    consumer TEXT NOT NULL,
    session_key TEXT NOT NULL,
    cursor BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (consumer, session_key)
  );
  CREATE TABLE deliveries (
    consumer TEXT NOT NULL,
    run_id TEXT NOT NULL,
    block_index BIGINT NOT NULL,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    platform_message_id TEXT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (consumer, run_id, block_index)
  );
  `,
  // The sender's name and role (authority) of an inbound message: a message the session's snapshot did not know
  // yet (a crash right after its acknowledgement) runs with its own authority after the restart.
  `
  ALTER TABLE inbox ADD COLUMN sender_name TEXT;
  ALTER TABLE inbox ADD COLUMN sender_role TEXT;
  `,
  // A refusal raised from inside a statement (SQLSTATE AL001, read as invalid_input): a transaction's writes sent as
  // one statement with no BEGIN check there what the statements sent alone check after (postgres/queue.ts).
  `
  CREATE FUNCTION agentlanes_refuse(reason TEXT) RETURNS TEXT LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION USING ERRCODE = 'AL001', MESSAGE = reason;
  END $$;
  `,
];

/** The schema version this build writes. */
export const postgresSchemaVersion = postgresMigrations.length;

/** Who holds the migration lock: one key per schema, so two processes opening one schema at once take turns. */
const lockKey = (schema: string): string => `agentlanes:migrate:${schema}`;

/** A list of migrations and the table in the schema that records how many of them were applied. */
export interface MigrationSet {
  readonly table: string;
  readonly migrations: readonly string[];
  /** Refuse a schema that recorded more migrations than this build has (one a newer agentlanes wrote). */
  readonly refuseNewer: boolean;
}

/**
 * Create the schema if needed and apply the set's missing migrations, one per transaction, under a session
 * advisory lock shared by every set of the schema (two processes opening at once: the second waits, then finds the
 * work done). A newer schema is refused with `ledger_version`, nothing changed.
 */
export async function applyMigrations(client: PoolClient, schema: string, set: MigrationSet): Promise<void> {
  const { table, migrations } = set;
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey(schema)]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${client.escapeIdentifier(schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table} (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const applied = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${table}`,
    );
    const current = applied.rows[0]?.version ?? 0;
    if (set.refuseNewer && current > migrations.length) {
      throw new RuntimeError(
        'ledger_version',
        `schema "${schema}" has version ${current}, newer than this agentlanes supports ` +
          `(${migrations.length}); upgrade agentlanes`,
        { details: { schema } },
      );
    }
    for (let version = current; version < migrations.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query(migrations[version] as string);
        await client.query(`INSERT INTO ${table} (version) VALUES ($1)`, [version + 1]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(schema)]).catch(() => undefined);
  }
}

/** Bring the ledger's tables of `schema` to `postgresSchemaVersion`. */
export function migratePostgres(client: PoolClient, schema: string): Promise<void> {
  return applyMigrations(client, schema, {
    table: 'agentlanes_migrations',
    migrations: postgresMigrations,
    refuseNewer: true,
  });
}
