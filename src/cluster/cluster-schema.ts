import type { PoolClient } from 'pg';
import { applyMigrations } from '../ledger/index.js';

/**
 * The cluster's tables, in order, beside the ledger's in the same schema (their own version table, so the
 * ledger's migrations and these never interleave). A shipped migration is never edited: a change is a new entry.
 * Times are milliseconds of the database's clock (`nowMs`), so no worker's clock decides a lease.
 */
export const clusterMigrations: readonly string[] = [
  `
  CREATE TABLE cluster_workers (
    worker_id TEXT PRIMARY KEY,
    started_at BIGINT NOT NULL,
    lease_until BIGINT NOT NULL
  );
  CREATE TABLE cluster_owners (
    session_key TEXT PRIMARY KEY,
    worker_id TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    claimed_at BIGINT NOT NULL
  );
  CREATE INDEX cluster_owners_by_worker ON cluster_owners (worker_id);
  CREATE TABLE cluster_requests (
    id BIGSERIAL PRIMARY KEY,
    session_key TEXT NOT NULL,
    worker_id TEXT NOT NULL,
    reply_to TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    answer TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX cluster_requests_to_serve ON cluster_requests (worker_id, id) WHERE status = 'pending';
  CREATE TABLE cluster_lane_slots (
    token TEXT PRIMARY KEY,
    lane TEXT NOT NULL,
    worker_id TEXT NOT NULL,
    acquired_at BIGINT NOT NULL
  );
  CREATE INDEX cluster_lane_slots_by_lane ON cluster_lane_slots (lane);
  CREATE TABLE cluster_lane_starts (
    id BIGSERIAL PRIMARY KEY,
    lane TEXT NOT NULL,
    at BIGINT NOT NULL
  );
  CREATE INDEX cluster_lane_starts_by_lane ON cluster_lane_starts (lane, at);
  `,
  // Plan steps as jobs (step-jobs.ts): `reply_to` is the owner waiting for the answer, `worker_id` the executor.
  `
  CREATE TABLE cluster_jobs (
    id BIGSERIAL PRIMARY KEY,
    session_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    reply_to TEXT NOT NULL,
    worker_id TEXT,
    status TEXT NOT NULL,
    payload TEXT NOT NULL,
    result TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX cluster_jobs_queued ON cluster_jobs (id) WHERE status = 'queued';
  CREATE INDEX cluster_jobs_by_owner ON cluster_jobs (reply_to);
  `,
  // Durable consumers read by one worker of the cluster at a time (consumer-claims.ts).
  `
  CREATE TABLE cluster_consumers (
    consumer_key TEXT PRIMARY KEY,
    worker_id TEXT NOT NULL,
    claimed_at BIGINT NOT NULL
  );
  `,
  // The lease check a fenced transaction runs last, in its COMMIT's message (session-owners.ts, leaseFence).
  `
  CREATE FUNCTION cluster_lease_check(holder TEXT) RETURNS BOOLEAN LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM cluster_workers
        WHERE worker_id = holder AND lease_until > (extract(epoch from clock_timestamp()) * 1000)::bigint) THEN
      RAISE EXCEPTION 'the lease of worker % ended before its transaction committed', holder
        USING ERRCODE = 'P0001';
    END IF;
    RETURN true;
  END $$;
  `,
  // The global lane's seats (lane-seats.ts): `concurrency` rows per lane, each leased to a worker until
  // `held_until` (0: free). They replace `cluster_lane_slots`, which a worker of an earlier version may still use.
  `
  CREATE TABLE cluster_lane_seats (
    lane TEXT NOT NULL,
    seat INT NOT NULL,
    worker_id TEXT,
    held_until BIGINT NOT NULL,
    PRIMARY KEY (lane, seat)
  );
  `,
];

/** The database's clock in milliseconds, as SQL (every lease and rate window is measured on it). */
export const nowMs = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * The doorbell channel: payloads are `request:<worker id>`, `answer:<worker id>:<request id>`, `lane:<lane>` (seats
 * were given back), `lane-wanted:<lane>` (a worker waits for a seat), and for step
 * jobs `jobs` (one was queued), `job:<owner id>` (one was answered) and `job-cancel:<executor id>`, and
 * `consumer-free` (a durable consumer was given up).
 */
export const doorbellChannel = 'agentlanes_cluster';

/**
 * Bring the cluster tables of `schema` to the latest version, under the ledger's advisory migration lock
 * (postgres/schema.ts: the ledger and the cluster never migrate one schema at once; workers take turns).
 */
export function migrateCluster(client: PoolClient, schema: string): Promise<void> {
  return applyMigrations(client, schema, {
    table: 'cluster_migrations',
    migrations: clusterMigrations,
    refuseNewer: false,
  });
}
