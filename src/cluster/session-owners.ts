import type { FenceLease } from '../ledger/index.js';
import type { ClusterDatabase, ClusterQuery } from './cluster-db.js';
import { doorbellChannel, nowMs } from './cluster-schema.js';
import { eventsRing } from './cluster-events.js';

/** Who holds a session: this worker (with the owner row's epoch), or another one. */
export type Ownership =
  { readonly mine: true; readonly epoch: number } | { readonly mine: false; readonly workerId: string };

/** SQL: the owner row names a worker whose lease is still running. */
const ownerAlive = (owners: string): string =>
  `EXISTS (SELECT 1 FROM cluster_workers w WHERE w.worker_id = ${owners}.worker_id AND w.lease_until > ${nowMs})`;

/** SQL: `text` as a string literal (standard_conforming_strings: only quotes are special). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The fence's lease for sessions `workerId` claimed: no transaction writing them outlives its lease, and none
 * commits once it ended (checked in SQL on the database's clock, last before COMMIT).
 */
export function leaseFence(workerId: string): FenceLease {
  return {
    holder: workerId,
    remainingMs: `(SELECT w.lease_until - ${nowMs} FROM cluster_workers w WHERE w.worker_id = $3)`,
    commitCheck: `SELECT cluster_lease_check(${literal(workerId)})`,
    // One ring per transaction that wrote events, delivered with its COMMIT (the other workers read the log on).
    eventsWritten: `SELECT pg_notify(${literal(doorbellChannel)}, ${literal(eventsRing)})`,
  };
}

/**
 * The claim and the fence in one transaction: the owner row, then the session's epoch in the ledger (its record
 * created when missing), which waits for the transactions still writing the session under the old epoch (they
 * hold its row, and none outlives its writer's lease), then the owner row's epoch and time. So every write of the
 * old owner committed before the claim, and every later one is refused by the new epoch.
 */
const claimStatements = {
  owner: `INSERT INTO cluster_owners AS o (session_key, worker_id, epoch, claimed_at) VALUES ($1, $2, 0, ${nowMs})
     ON CONFLICT (session_key) DO UPDATE SET worker_id = excluded.worker_id, claimed_at = excluded.claimed_at
       WHERE o.worker_id = excluded.worker_id OR NOT ${ownerAlive('o')}
     RETURNING worker_id`,
  epoch: `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at)
       VALUES ($1, '{}', NULL, 1, 0, ${nowMs})
     ON CONFLICT (session_key) DO UPDATE SET epoch = sessions.epoch + 1, updated_at = excluded.updated_at
     RETURNING epoch`,
  stamp: `UPDATE cluster_owners SET epoch = $2, claimed_at = ${nowMs} WHERE session_key = $1`,
};

/**
 * Claim `key` for `workerId` unless a live worker holds it: the owner row and the session's epoch (the fence) move
 * in one transaction, so two workers racing for one session cannot both win, and nothing the previous owner writes
 * lands after the claim. The owner row's epoch is the session's.
 */
export async function claimSession(
  database: ClusterDatabase,
  key: string,
  workerId: string,
): Promise<Ownership> {
  const epoch = await database.transaction(async (query) => {
    const claimed = await query(claimStatements.owner, [key, workerId]);
    if (claimed.rowCount === 0) return undefined;
    const bumped = await query<{ epoch: number }>(claimStatements.epoch, [key]);
    const value = bumped.rows[0]?.epoch ?? 0;
    await query(claimStatements.stamp, [key, value]);
    return value;
  });
  if (epoch !== undefined) return { mine: true, epoch };
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
