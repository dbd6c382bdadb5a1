import type { Clock } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { StepJob } from '../plans/index.js';
import type { ToolOutcome } from '../tools/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import type { Doorbell } from './doorbell.js';
import { executeStepJob, failedOutcome, type StepJobHost } from './step-jobs-local.js';
import type { StepJobPayload } from './step-jobs-rows.js';

/** What a worker needs to run the step jobs of the cluster (what an executor does with one job is here). */
export interface JobServerDeps {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly clock: Clock;
  /** How late a queued job or a cancellation is seen when its NOTIFY was missed. */
  readonly pollMs: number;
  /** Most jobs this worker runs at once. */
  readonly concurrency: number;
  /** This worker's current id (it changes when the lease is lost). */
  readonly workerId: () => string;
  /** True while this worker's lease surely holds: it takes no job otherwise. */
  readonly valid: () => boolean;
  /** False once the runtime is closing: it then takes only the jobs of its own plans. */
  readonly accepting: () => boolean;
  readonly host: StepJobHost;
  readonly onError: (error: unknown) => void;
}

/** Which job an answer is for, and whom to ring. */
type JobIdentity = Pick<RunningJob, 'id' | 'takenAs' | 'replyTo'>;

/** A job this worker runs: its row, the id it took it under, how to stop it, and its end. */
export interface RunningJob {
  readonly id: number;
  readonly takenAs: string;
  readonly replyTo: string;
  readonly controller: AbortController;
  readonly settled: Promise<void>;
}

/** A job row as taken. */
export interface TakenRow {
  readonly id: number;
  readonly session_key: string;
  readonly run_id: string;
  readonly tool_call_id: string;
  readonly reply_to: string;
  readonly payload: string;
}

/** Take queued jobs, oldest first, up to `free` (skipping those another worker is taking). */
export async function takeJobs(deps: JobServerDeps, free: number): Promise<TakenRow[]> {
  const { rows } = await deps.database.query<TakenRow>(
    `UPDATE cluster_jobs SET status = 'running', worker_id = $1 WHERE id IN (
       SELECT id FROM cluster_jobs WHERE status = 'queued' AND ($3 OR reply_to = $1)
       ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, session_key, run_id, tool_call_id, reply_to, payload`,
    [deps.workerId(), free, deps.accepting()],
  );
  return rows.sort((left, right) => left.id - right.id);
}

/** The job a row describes; undefined when its payload does not parse (the job is answered as failed). */
function jobOf(row: TakenRow): StepJob | undefined {
  let payload: StepJobPayload;
  try {
    payload = JSON.parse(row.payload) as StepJobPayload;
  } catch {
    return undefined;
  }
  return {
    toolCallId: row.tool_call_id,
    sessionKey: row.session_key,
    runId: row.run_id,
    tool: payload.tool,
    args: payload.args,
    ...(payload.timeoutMs === undefined ? {} : { timeoutMs: payload.timeoutMs }),
    ...(payload.retry === undefined ? {} : { retry: payload.retry }),
  };
}

/** The answer as stored: an output that JSON cannot carry is the step's failure, not a lost answer. */
function serialize(outcome: ToolOutcome, tool: string): string {
  try {
    return JSON.stringify(outcome);
  } catch {
    const message = `the output of "${tool}" cannot be sent back as JSON`;
    return JSON.stringify({ ...failedOutcome({ code: 'tool_failed', message }), attempts: outcome.attempts });
  }
}

/** Store the answer and ring the owner; a job cancelled meanwhile is deleted instead (no one waits for it). */
async function answer(deps: JobServerDeps, job: JobIdentity, result: string): Promise<void> {
  const { database } = deps;
  const stored = await database.query(
    `UPDATE cluster_jobs SET status = 'done', result = $2
     WHERE id = $1 AND worker_id = $3 AND status = 'running'`,
    [job.id, result, job.takenAs],
  );
  if (stored.rowCount === 1) {
    await deps.doorbell.ring(`job:${job.replyTo}`);
    return;
  }
  await database.query(`DELETE FROM cluster_jobs WHERE id = $1 AND worker_id = $2 AND status = 'cancelled'`, [
    job.id,
    job.takenAs,
  ]);
}

/**
 * Store the answer, again every `pollMs` while it fails and the lease holds: the owner waits for as long as this
 * worker lives, and once its lease ran out the owner answers the step's failure itself.
 */
async function keepAnswering(deps: JobServerDeps, job: JobIdentity, result: string): Promise<void> {
  for (;;) {
    try {
      await answer(deps, job, result);
      return;
    } catch (error) {
      if (!deps.valid()) throw error;
      deps.onError(error);
      await deps.clock.sleep(deps.pollMs);
    }
  }
}

/** Abort the jobs whose owner withdrew them (cancelled, or deleted after it gave up on this worker). */
export async function abortWithdrawn(
  deps: JobServerDeps,
  running: ReadonlyMap<number, RunningJob>,
): Promise<void> {
  if (running.size === 0) return;
  const { rows } = await deps.database.query<{ id: number }>(
    `SELECT id FROM cluster_jobs WHERE id = ANY($1::bigint[]) AND status = 'running'`,
    [[...running.keys()]],
  );
  const wanted = new Set(rows.map((row) => row.id));
  for (const job of running.values()) {
    if (!wanted.has(job.id))
      job.controller.abort(new RuntimeError('cancelled', 'the plan step was withdrawn'));
  }
}

/** Run a taken job with this worker's tool, then store its answer; `onSettled` runs once it is stored (or lost). */
export function startJob(deps: JobServerDeps, row: TakenRow, onSettled: () => void): RunningJob {
  const controller = new AbortController();
  const work = jobOf(row);
  const identity = { id: row.id, takenAs: deps.workerId(), replyTo: row.reply_to };
  const unreadable = {
    code: 'internal',
    message: `step job ${row.id} has a payload that does not parse`,
  } as const;
  const outcome =
    work === undefined
      ? Promise.resolve(failedOutcome(unreadable))
      : executeStepJob(deps.host, deps.clock, work, controller.signal);
  const settled = outcome
    .then((result) => keepAnswering(deps, identity, serialize(result, work?.tool ?? '')))
    .catch(deps.onError)
    .finally(onSettled);
  return { ...identity, controller, settled };
}
