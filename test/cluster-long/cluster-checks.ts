import { rawQuery } from '../support/postgres.js';

/** A message the test saw acknowledged, in acknowledgement order per session. */
export interface Acked {
  readonly sessionKey: string;
  readonly messageId: string;
  /** Queued modes (followup, collect) keep their order; steer and interrupt may overtake what is queued. */
  readonly queued: boolean;
}

interface InboxRow {
  session_key: string;
  message_id: string;
  status: string;
  run_id: string | null;
}
interface RunRow {
  id: number;
  run_id: string;
  session_key: string;
  status: string;
  started_at: number;
  ended_at: number | null;
}

/**
 * Every invariant of the long suite, from the ledger alone: each acknowledged message recorded once and settled
 * (consumed by exactly one run, or dropped/cancelled); per session, the runs that consumed its queued messages in
 * acknowledgement order; no two runs of a session overlapping; no open run left; and no event of a crashed run
 * after its crash record (a fenced worker's write). Returns the problems found (empty: all hold).
 */
export async function checkCluster(schema: string, acked: readonly Acked[]): Promise<string[]> {
  const problems: string[] = [];
  const inbox = await rawQuery<InboxRow>(schema, 'SELECT session_key, message_id, status, run_id FROM inbox');
  const runs = await rawQuery<RunRow>(
    schema,
    `SELECT id::float8 AS id, run_id, session_key, status, started_at::float8 AS started_at,
       ended_at::float8 AS ended_at FROM runs ORDER BY id`,
  );
  const runOrder = new Map(runs.map((run) => [run.run_id, Number(run.id)]));
  const rows = new Map<string, InboxRow[]>();
  for (const row of inbox) {
    const key = `${row.session_key}\u0000${row.message_id}`;
    rows.set(key, [...(rows.get(key) ?? []), row]);
  }
  const lastRun = new Map<string, number>();
  for (const { sessionKey, messageId, queued } of acked) {
    const found = rows.get(`${sessionKey}\u0000${messageId}`) ?? [];
    if (found.length !== 1) {
      problems.push(`${sessionKey}/${messageId}: ${found.length} inbox rows`);
      continue;
    }
    const row = found[0] as InboxRow;
    // Dropped or cancelled explicitly; steered into the run that was active (that run consumed it).
    if (row.status === 'dropped' || row.status === 'cancelled' || row.status === 'steered') continue;
    const order = row.run_id === null ? undefined : runOrder.get(row.run_id);
    if (row.status === 'pending' || order === undefined) {
      problems.push(`${sessionKey}/${messageId}: ${row.status}, run ${row.run_id ?? 'none'}`);
      continue;
    }
    if (!queued) continue;
    const last = lastRun.get(sessionKey) ?? 0;
    if (order < last)
      problems.push(`${sessionKey}/${messageId}: consumed by run ${order}, after run ${last}`);
    lastRun.set(sessionKey, order);
  }
  problems.push(...checkRuns(runs));
  const late = await rawQuery<{ run_id: string }>(
    schema,
    `SELECT e.run_id FROM events e JOIN runs r ON r.run_id = e.run_id
     WHERE r.status = 'crashed' AND e.cursor > (
       SELECT max(cursor) FROM events x WHERE x.run_id = e.run_id AND x.type = 'run.ended')`,
  );
  for (const row of late) problems.push(`run ${row.run_id}: an event after its crash record`);
  return problems;
}

/** No run left open, and no two runs of a session overlapping in time. */
function checkRuns(runs: readonly RunRow[]): string[] {
  const problems: string[] = [];
  const bySession = new Map<string, RunRow[]>();
  for (const run of runs) bySession.set(run.session_key, [...(bySession.get(run.session_key) ?? []), run]);
  for (const [sessionKey, list] of bySession) {
    for (const run of list)
      if (run.ended_at === null) problems.push(`run ${run.run_id}: still ${run.status}`);
    const sorted = [...list].sort((left, right) => left.started_at - right.started_at);
    for (let index = 1; index < sorted.length; index++) {
      const previous = sorted[index - 1] as RunRow;
      const run = sorted[index] as RunRow;
      if (previous.ended_at !== null && run.started_at < previous.ended_at) {
        problems.push(`${sessionKey}: run ${run.run_id} started before ${previous.run_id} ended`);
      }
    }
  }
  return problems;
}

/** What recovery did over the suite: runs completed after a resume, calls found in doubt, runs closed after the budget. */
export interface ResumeReport {
  readonly completedAfterResume: number;
  readonly inDoubt: number;
  readonly closedAfterBudget: number;
  /** A run resumed more often than the budget, or one resumed and never ended. */
  readonly problems: string[];
}

/**
 * Count what the takeovers resumed, from the ledger: each run with a `run.resumed` after a crash or a takeover must
 * have ended (completed, or closed `crashed` once its `maxResumes` were spent), never resumed more often than that.
 */
export async function resumeReport(schema: string, maxResumes: number): Promise<ResumeReport> {
  const resumed = await rawQuery<{ run_id: string; status: string; resumes: number }>(
    schema,
    `SELECT r.run_id, r.status, count(*)::int AS resumes FROM runs r
       JOIN events e ON e.run_id = r.run_id AND e.type = 'run.resumed'
      WHERE e.body LIKE '%"reason":"takeover"%' OR e.body LIKE '%"reason":"crash"%'
      GROUP BY r.run_id, r.status`,
  );
  const [doubts] = await rawQuery<{ count: number }>(
    schema,
    "SELECT count(*)::int AS count FROM events WHERE type = 'tool.in_doubt'",
  );
  const [crashed] = await rawQuery<{ count: number }>(
    schema,
    "SELECT count(*)::int AS count FROM runs WHERE status = 'crashed'",
  );
  const problems: string[] = [];
  for (const run of resumed) {
    if (run.resumes > maxResumes) problems.push(`run ${run.run_id}: resumed ${run.resumes} times`);
    if (run.status !== 'completed' && run.status !== 'crashed' && !run.status.startsWith('awaiting')) {
      problems.push(`run ${run.run_id}: resumed, then left ${run.status}`);
    }
  }
  return {
    completedAfterResume: resumed.filter((run) => run.status === 'completed').length,
    inDoubt: doubts?.count ?? 0,
    closedAfterBudget: crashed?.count ?? 0,
    problems,
  };
}
