import type { StepJob } from '../plans/index.js';
import type { ToolOutcome } from '../tools/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';
import type { Doorbell } from './doorbell.js';
import { failedOutcome } from './step-jobs-local.js';

/** What a job row carries besides its identity (`payload`, JSON). */
export interface StepJobPayload {
  readonly tool: string;
  readonly args: unknown;
  readonly timeoutMs?: number;
  readonly retry?: StepJob['retry'];
}

/** A job as its owner sees it: its status, the stored answer, and whether its executor is alive. */
export interface JobRow {
  readonly status: string;
  readonly result: string | null;
  readonly alive: boolean;
}

/** SQL: the worker named by `column` (qualify it: the subquery has its own `worker_id`) holds a running lease. */
const workerAlive = (column: string): string =>
  `EXISTS (SELECT 1 FROM cluster_workers w WHERE w.worker_id = ${column} AND w.lease_until > ${nowMs})`;

/** Queue `job` with `replyTo` as the worker waiting for its answer; resolves the row's id. */
export async function insertJob(database: ClusterDatabase, job: StepJob, replyTo: string): Promise<number> {
  const payload: StepJobPayload = {
    tool: job.tool,
    args: job.args,
    ...(job.timeoutMs === undefined ? {} : { timeoutMs: job.timeoutMs }),
    ...(job.retry === undefined ? {} : { retry: job.retry }),
  };
  const inserted = await database.query<{ id: number }>(
    `INSERT INTO cluster_jobs (session_key, run_id, tool_call_id, reply_to, status, payload, created_at)
     VALUES ($1, $2, $3, $4, 'queued', $5, ${nowMs}) RETURNING id`,
    [job.sessionKey, job.runId, job.toolCallId, replyTo, JSON.stringify(payload)],
  );
  return (inserted.rows[0] as { id: number }).id;
}

/** Job `id` as its owner sees it; undefined once the row is gone. */
export async function readJob(database: ClusterDatabase, id: number): Promise<JobRow | undefined> {
  const { rows } = await database.query<JobRow>(
    `SELECT status, result, ${workerAlive('cluster_jobs.worker_id')} AS alive FROM cluster_jobs WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** Delete job `id` if it is still `status`: true when this call removed it. */
export async function deleteJob(database: ClusterDatabase, id: number, status: string): Promise<boolean> {
  const removed = await database.query('DELETE FROM cluster_jobs WHERE id = $1 AND status = $2', [
    id,
    status,
  ]);
  return removed.rowCount === 1;
}

/** The stored answer; one that does not parse is an `internal` failure rather than a thrown error. */
export function parseOutcome(text: string): ToolOutcome {
  try {
    const outcome = JSON.parse(text) as ToolOutcome;
    if (typeof outcome === 'object' && outcome !== null && typeof outcome.ok === 'boolean') return outcome;
  } catch {
    // Reported below as the step's failure.
  }
  return failedOutcome({ code: 'internal', message: 'the answer of a step job could not be read' });
}

/**
 * Withdraw job `id`: a queued (or already answered) row is deleted, so it never starts; a running one is marked
 * `cancelled` and its executor rung to abort it (the executor deletes the row). Resolves whether it had started.
 */
export async function cancelJob(database: ClusterDatabase, doorbell: Doorbell, id: number): Promise<boolean> {
  for (let round = 0; round < 3; round++) {
    const gone = await database.query<{ status: string }>(
      `DELETE FROM cluster_jobs WHERE id = $1 AND status IN ('queued', 'done') RETURNING status`,
      [id],
    );
    if (gone.rowCount === 1) return gone.rows[0]?.status === 'done';
    const cancelled = await database.query<{ worker_id: string }>(
      `UPDATE cluster_jobs SET status = 'cancelled' WHERE id = $1 AND status = 'running' RETURNING worker_id`,
      [id],
    );
    const executor = cancelled.rows[0]?.worker_id;
    if (executor !== undefined) {
      await doorbell.ring(`job-cancel:${executor}`);
      return true;
    }
    // Neither: gone already, or taken between the two statements (the next round marks it).
  }
  return false;
}

/**
 * Forget jobs no one waits for or will answer: those of a dead owner that are not running (or whose executor died
 * too), cancelled ones whose executor died, and finished ones left behind for ten minutes.
 */
export async function pruneJobs(database: ClusterDatabase): Promise<void> {
  await database.query(
    `DELETE FROM cluster_jobs WHERE
       (NOT ${workerAlive('cluster_jobs.reply_to')}
         AND (status <> 'running' OR NOT ${workerAlive('cluster_jobs.worker_id')}))
       OR (status = 'cancelled' AND NOT ${workerAlive('cluster_jobs.worker_id')})
       OR (status IN ('done', 'cancelled') AND created_at < ${nowMs} - 600000)`,
  );
}
