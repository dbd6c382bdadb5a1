import type { RunRequest } from './run-request.js';
import type { RunResult, RunSummary } from './run-summary.js';

/**
 * A plan run or an undo waiting for its session machine to start it: `run` executes it when the machine enters
 * `running` with it (its caller hears the outcome through its own promise), `fail` refuses it when it never can.
 * It belongs to one run of one session (`sessionKey`, `runId`): only that run's START takes it.
 */
export interface RunJob {
  readonly sessionKey: string;
  readonly runId: string;
  readonly run: (request: RunRequest) => Promise<RunResult>;
  readonly fail: (error: Error) => void;
}

/** The plan runs and undos handed to session machines and not started yet, by the id their START carries. */
export interface RunJobs {
  /** Keep `job` until its machine starts it; returns the id its START event names. */
  add(job: RunJob): string;
  /**
   * The job `id` names, taken (a job starts once), when it is the job of run `runId` of session `sessionKey`: an id
   * from another process (a snapshot saved before a crash) may name another session's job here, which stays.
   */
  take(id: string, sessionKey: string, runId: string): RunJob | undefined;
  /** Refuse every job not started yet (their sessions stopped: `close()`). */
  failAll(error: Error): void;
}

/** No job waiting yet. */
export function createRunJobs(): RunJobs {
  const waiting = new Map<string, RunJob>();
  let next = 1;
  return {
    add(job) {
      const id = `job-${next++}`;
      waiting.set(id, job);
      return id;
    },
    take(id, sessionKey, runId) {
      const job = waiting.get(id);
      if (job === undefined || job.sessionKey !== sessionKey || job.runId !== runId) return undefined;
      waiting.delete(id);
      return job;
    },
    failAll(error) {
      const jobs = [...waiting.values()];
      waiting.clear();
      for (const job of jobs) job.fail(error);
    },
  };
}

/**
 * What the session machine is told when a plan run or an undo it ran stopped: its run ended as far as the
 * machine is concerned (a plan's own end or pause reached the machine through its plan events already).
 */
export function workEnded(runId: string, startedAt: number, endedAt: number): RunSummary {
  return { runId, status: 'completed', text: '', messageIds: [], startedAt, endedAt };
}
