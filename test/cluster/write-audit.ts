/**
 * A test-only audit of a cluster's writes, on the test's own schema. Deferred constraint triggers record, at
 * commit and on the database's clock, every claim of a session (a `cluster_owners` row written: session, worker
 * id, epoch, the claiming process) and every committed write of a session's rows (table, session, the writing
 * process, and who held the session at that moment: the last claim committed before it, and that worker's lease).
 * A process is named by its connections' `application_name` (the worker's name, see cluster-driver.ts), so a write
 * is attributed whether or not the code under test fences it.
 */
import { openClusterDatabase } from '../../src/cluster/cluster-db.js';
import { freshPostgresLedger, postgresUrl, rawQuery } from '../support/postgres.js';

/** Tables with a `session_key` that a session's owner writes alone (consumers and deliveries are not fenced). */
const unfenced = new Set(['consumers', 'deliveries', 'session_forks']);

const nowMs = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

const functions = `
  CREATE TABLE audit_claims (
    id BIGSERIAL PRIMARY KEY, session_key TEXT NOT NULL, worker_id TEXT NOT NULL, epoch BIGINT NOT NULL,
    claimer TEXT NOT NULL, at BIGINT NOT NULL);
  CREATE INDEX audit_claims_last ON audit_claims (session_key, id);
  CREATE TABLE audit_writes (
    id BIGSERIAL PRIMARY KEY, table_name TEXT NOT NULL, op TEXT NOT NULL, session_key TEXT NOT NULL,
    writer TEXT NOT NULL, at BIGINT NOT NULL, holder TEXT, holder_worker_id TEXT, holder_lease_until BIGINT);
  CREATE FUNCTION audit_claim() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO audit_claims (session_key, worker_id, epoch, claimer, at)
      VALUES (NEW.session_key, NEW.worker_id, NEW.epoch, current_setting('application_name'), ${nowMs});
    RETURN NULL;
  END $$;
  CREATE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    key TEXT;
    claim RECORD;
  BEGIN
    IF TG_OP = 'DELETE' THEN key := OLD.session_key; ELSE key := NEW.session_key; END IF;
    SELECT claimer, worker_id INTO claim FROM audit_claims WHERE session_key = key ORDER BY id DESC LIMIT 1;
    INSERT INTO audit_writes (table_name, op, session_key, writer, at, holder, holder_worker_id, holder_lease_until)
      VALUES (TG_TABLE_NAME, TG_OP, key, current_setting('application_name'), ${nowMs}, claim.claimer,
        claim.worker_id, (SELECT lease_until FROM cluster_workers WHERE worker_id = claim.worker_id));
    RETURN NULL;
  END $$;
  CREATE CONSTRAINT TRIGGER audit_claims AFTER INSERT OR UPDATE ON cluster_owners
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_claim();
`;

/** Create the ledger's and the cluster's tables of `schema`, then the audit's tables and triggers. */
export async function installWriteAudit(schema: string): Promise<void> {
  const ledger = freshPostgresLedger({ schema });
  await ledger.ready();
  await ledger.close();
  const database = await openClusterDatabase({ connectionString: postgresUrl, schema });
  await database.close();
  const tables = await rawQuery<{ table_name: string }>(
    schema,
    `SELECT table_name FROM information_schema.columns
     WHERE table_schema = $1 AND column_name = 'session_key' AND table_name NOT LIKE 'cluster\\_%'`,
    [schema],
  );
  const audited = tables.map((row) => row.table_name).filter((table) => !unfenced.has(table));
  const triggers = audited.map(
    (table) => `CREATE CONSTRAINT TRIGGER audit_writes AFTER INSERT OR UPDATE OR DELETE ON ${table}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_write();`,
  );
  await rawQuery(schema, functions + triggers.join('\n'));
}

/** What the audit found. */
export interface WriteAudit {
  /** Committed writes of sessions, and claims. */
  readonly writes: number;
  readonly claims: number;
  /** Writes committed while another process's claim of their session was the last one (or with none). */
  readonly afterForeignClaim: string[];
  /** Writes committed by the session's holder after its lease had ended. */
  readonly afterLease: string[];
}

/** Every committed write against the claims and leases (call once the workers are idle). */
export async function auditWrites(schema: string): Promise<WriteAudit> {
  const rows = await rawQuery<{
    table_name: string;
    op: string;
    session_key: string;
    writer: string;
    at: number;
    holder: string | null;
    holder_lease_until: number | null;
  }>(
    schema,
    `SELECT table_name, op, session_key, writer, at::float8 AS at, holder,
       holder_lease_until::float8 AS holder_lease_until FROM audit_writes ORDER BY id`,
  );
  const [claims] = await rawQuery<{ n: number }>(schema, 'SELECT count(*)::int AS n FROM audit_claims');
  const describe = (row: (typeof rows)[number]): string =>
    `${row.op} ${row.table_name} of ${row.session_key} by ${row.writer} at ${row.at}`;
  return {
    writes: rows.length,
    claims: claims?.n ?? 0,
    afterForeignClaim: rows
      .filter((row) => row.holder !== row.writer)
      .map((row) => `${describe(row)}, held by ${row.holder ?? 'nobody'}`),
    afterLease: rows
      .filter((row) => row.holder === row.writer && (row.holder_lease_until ?? 0) <= row.at)
      .map((row) => `${describe(row)}, its lease ended at ${row.holder_lease_until ?? 'none'}`),
  };
}
