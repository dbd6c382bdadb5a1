import type { ClusterDatabase, ClusterQuery } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';

/** Who holds a session: this worker (with the owner row's epoch), or another one. */
export type Ownership =
  { readonly mine: true; readonly epoch: number } | { readonly mine: false; readonly workerId: string };

/** SQL: the owner row names a worker whose lease is still running. */
const ownerAlive = (owners: string): string =>
  `EXISTS (SELECT 1 FROM cluster_workers w WHERE w.worker_id = ${owners}.worker_id AND w.lease_until > ${nowMs})`;

/**
 * Claim `key` for `workerId` unless a live worker holds it. A claim from another (dead) worker bumps the owner
 * row's epoch; a claim of a row this worker already holds changes nothing. One statement, so two workers racing
 * for one session cannot both win.
 */
export async function claimSession(
  database: ClusterDatabase,
  key: string,
  workerId: string,
): Promise<Ownership> {
  const claimed = await database.query<{ epoch: number }>(
    `INSERT INTO cluster_owners AS o (session_key, worker_id, epoch, claimed_at) VALUES ($1, $2, 1, ${nowMs})
     ON CONFLICT (session_key) DO UPDATE
       SET worker_id = excluded.worker_id, claimed_at = excluded.claimed_at,
           epoch = CASE WHEN o.worker_id = excluded.worker_id THEN o.epoch ELSE o.epoch + 1 END
       WHERE o.worker_id = excluded.worker_id OR NOT ${ownerAlive('o')}
     RETURNING epoch`,
    [key, workerId],
  );
  const row = claimed.rows[0];
  if (row !== undefined) return { mine: true, epoch: row.epoch };
  const owner = await database.query<{ worker_id: string }>(
    'SELECT worker_id FROM cluster_owners WHERE session_key = $1',
    [key],
  );
  const holder = owner.rows[0]?.worker_id;
  // The holder's lease ran out between the two statements: claim again.
  if (holder === undefined) return claimSession(database, key, workerId);
  return { mine: false, workerId: holder };
}

/** True when `workerId`'s lease is still running. */
export async function workerAlive(query: ClusterQuery, workerId: string): Promise<boolean> {
  const { rowCount } = await query(
    `SELECT 1 FROM cluster_workers WHERE worker_id = $1 AND lease_until > ${nowMs}`,
    [workerId],
  );
  return rowCount === 1;
}

/** Give up `key` (only when this worker still holds it). */
export async function releaseSession(
  database: ClusterDatabase,
  key: string,
  workerId: string,
): Promise<void> {
  await database.query('DELETE FROM cluster_owners WHERE session_key = $1 AND worker_id = $2', [
    key,
    workerId,
  ]);
}

/**
 * Sessions with work to do (a message still to run, a run open or paused, per the ledger's tables) that no live
 * worker holds: a dead worker's, or none's (a worker that closed with messages still queued). Random order, so
 * the workers taking over spread them.
 */
export async function orphanedSessions(database: ClusterDatabase, limit: number): Promise<string[]> {
  const { rows } = await database.query<{ session_key: string }>(
    `SELECT k.session_key FROM (
       SELECT session_key FROM inbox WHERE status IN ('pending', 'steered')
       UNION
       SELECT session_key FROM runs WHERE status IN ('running', 'awaiting_approval', 'awaiting_tool_results')
     ) k
     WHERE NOT EXISTS (SELECT 1 FROM cluster_owners o WHERE o.session_key = k.session_key AND ${ownerAlive('o')})
     ORDER BY random() LIMIT $1`,
    [limit],
  );
  return rows.map((row) => row.session_key);
}

/** Forget workers whose lease ran out long ago (their sessions were free since then anyway). */
export async function pruneWorkers(database: ClusterDatabase, olderThanMs: number): Promise<void> {
  await database.query(`DELETE FROM cluster_workers WHERE lease_until < ${nowMs} - $1`, [olderThanMs]);
}
