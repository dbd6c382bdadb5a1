import type { TimerHandle } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { Doorbell } from './doorbell.js';
import {
  abortWithdrawn,
  startJob,
  takeJobs,
  type JobServerDeps,
  type RunningJob,
  type TakenRow,
} from './step-jobs-executor.js';
import type { StepJobDeps } from './step-jobs.js';

export type { JobServerDeps } from './step-jobs-executor.js';

/** Call `wake` when a job is queued or one of `workerId`'s is cancelled; returns the unsubscribe function. */
function listenForJobs(doorbell: Doorbell, workerId: string, wake: () => void): () => void {
  const offJobs = doorbell.on('jobs', wake);
  const offCancel = doorbell.on(`job-cancel:${workerId}`, wake);
  return () => {
    offJobs();
    offCancel();
  };
}

/**
 * Serve the cluster's step jobs: take queued ones up to `concurrency` at each `jobs` ring and every `pollMs`, run
 * each with this worker's tool, store its answer and ring its owner; a `job-cancel` ring (or the poll) aborts the
 * ones withdrawn. The stop function aborts what still runs and resolves once their answers are stored.
 */
export function serveStepJobs(deps: JobServerDeps): () => Promise<void> {
  const running = new Map<number, RunningJob>();
  let timer: TimerHandle;
  let stopped = false;
  let pumping: Promise<void> | undefined;
  let again = false;
  let unsubscribe = (): void => undefined;
  let listeningAs = '';
  const start = (row: TakenRow): void => {
    const job = startJob(deps, row, () => {
      running.delete(row.id);
      void pump();
    });
    running.set(row.id, job);
  };
  const pumpOnce = async (): Promise<void> => {
    do {
      again = false;
      if (listeningAs !== deps.workerId()) listen();
      await abortWithdrawn(deps, running);
      const free = deps.concurrency - running.size;
      if (free <= 0 || !deps.valid()) break;
      // Started even when the worker stopped meanwhile: the rows are taken, and the stop aborts them.
      for (const row of await takeJobs(deps, free)) start(row);
    } while (again && !stopped);
  };
  const pump = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (pumping !== undefined) {
      again = true;
      return pumping;
    }
    pumping = pumpOnce()
      .catch(deps.onError)
      .finally(() => (pumping = undefined));
    return pumping;
  };
  const listen = (): void => {
    unsubscribe();
    listeningAs = deps.workerId();
    unsubscribe = listenForJobs(deps.doorbell, listeningAs, () => void pump());
  };
  const tick = (): void => {
    if (stopped) return;
    void pump().finally(() => {
      if (!stopped) timer = deps.clock.setTimeout(tick, deps.pollMs);
    });
  };
  tick();
  return async () => {
    stopped = true;
    unsubscribe();
    if (timer !== undefined) deps.clock.clearTimeout(timer);
    await pumping;
    const closing = new RuntimeError('cancelled', 'the worker running this plan step is closing');
    for (const job of running.values()) job.controller.abort(closing);
    await Promise.all([...running.values()].map((job) => job.settled));
  };
}

/** What a started cluster hands to its step jobs. */
export interface StepJobsStart extends Omit<StepJobDeps, 'workerId'> {
  readonly lease: { readonly workerId: string; valid(): boolean };
  readonly concurrency: number;
  readonly accepting: () => boolean;
}

/** Start serving step jobs; returns what queueing one needs (`runStepJob`) and the stop function. */
export function startStepJobs(start: StepJobsStart): { deps: StepJobDeps; stop: () => Promise<void> } {
  const { lease, concurrency, accepting, ...shared } = start;
  const workerId = (): string => lease.workerId;
  const stop = serveStepJobs({ ...shared, workerId, concurrency, accepting, valid: () => lease.valid() });
  return { deps: { ...shared, workerId }, stop };
}
