import type { Clock, TimerHandle } from '../core/index.js';
import { createDeferred } from '../core/index.js';
import { randomIds } from '../core/index.js';
import type { GlobalLane, GlobalLaneOptions } from '../lanes/index.js';
import { openClusterDatabase, type ClusterDatabase } from './cluster-db.js';
import { createClusterLane } from './cluster-lane.js';
import {
  clusterConsumers,
  createConsumerClaims,
  pruneConsumers,
  type ClusterConsumers,
  type ConsumerClaims,
} from './consumer-claims.js';
import { nowMs } from './cluster-schema.js';
import { openDoorbell, type Doorbell } from './doorbell.js';
import { answerFallbackMs, serveRequests, type RequestDeps } from './requests.js';
import { orphanedSessions, pruneWorkers } from './session-owners.js';
import { createSessionRouter, routedCalls, type RoutedCalls } from './session-router.js';
import type { ClusterHost, SessionRouter } from './session-router.js';
import { createWorkerLease, type WorkerLease } from './worker-lease.js';
import {
  clusterJobSettings,
  clusterTiming,
  type ClusterJobSettings,
  type ClusterOptions,
  type ClusterTiming,
} from './cluster-options.js';
import type { StepJob } from '../plans/index.js';
import type { ToolOutcome } from '../tools/index.js';
import type { StepJobHost } from './step-jobs-local.js';
import { pruneJobs } from './step-jobs-rows.js';
import { startStepJobs } from './step-jobs-serve.js';
import { runStepJob, type StepJobDeps } from './step-jobs.js';

export type { ClusterHost } from './session-router.js';

/** Several runtime processes on one Postgres database: who holds which session, and the calls between them. */
export interface Cluster extends ClusterConsumers, RoutedCalls {
  /** This worker's current id ('' until it registered). */
  readonly workerId: string;
  readonly timing: ClusterTiming;
  /** Where this worker's plan steps run, and how many step jobs it runs at once. */
  readonly jobs: ClusterJobSettings;
  /**
   * Register, then serve forwarded calls and take over the sessions of dead workers for `host`, and run the
   * cluster's step jobs with `jobs`' tools.
   */
  start(host: ClusterHost, jobs: StepJobHost): Promise<void>;
  /** Run a plan step as a job any worker may take (see `runStepJob`); waits for `start`. Never rejects. */
  runStep(job: StepJob, signal: AbortSignal): Promise<ToolOutcome>;
  /** Claim `sessionKey` unless a live worker holds it (adopting it here): resolves whether this worker holds it. */
  claim(sessionKey: string): Promise<boolean>;
  /** True when this worker holds `sessionKey`. */
  owns(sessionKey: string): boolean;
  /** The global lane with the cluster-wide cap and rate over `local`. */
  lane(
    local: GlobalLane,
    options: Pick<GlobalLaneOptions, 'concurrency' | 'rate' | 'perProvider'>,
  ): GlobalLane;
  /** The cluster's connections and doorbell (opened at the first call). */
  connections(): Promise<{ readonly database: ClusterDatabase; readonly doorbell: Doorbell }>;
  /** Stop serving and scanning and leave the cluster: this worker's sessions are free at once. */
  close(): Promise<void>;
}

/** What a started cluster holds. */
interface Parts {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly lease: WorkerLease;
  readonly requests: RequestDeps;
  readonly router: SessionRouter;
  readonly consumers: ConsumerClaims;
}

/** Keep taking this worker's requests: at each ring, and every `pollMs` in case a ring was missed. */
function startServing(parts: Parts, clock: Clock, pollMs: number, onError: (error: unknown) => void) {
  let timer: TimerHandle;
  let stopped = false;
  let running = false;
  let again = false;
  let unsubscribe = (): void => undefined;
  let listeningAs = '';
  const pump = async (): Promise<void> => {
    if (running) return void (again = true);
    running = true;
    try {
      do {
        again = false;
        if (listeningAs !== parts.lease.workerId) listen();
        if (!parts.lease.valid()) break;
        const served = await serveRequests(parts.requests, (request) => parts.router.serve(request), onError);
        again ||= served > 0;
      } while (again && !stopped);
    } catch (error) {
      onError(error);
    } finally {
      running = false;
    }
  };
  const listen = (): void => {
    unsubscribe();
    listeningAs = parts.lease.workerId;
    unsubscribe = parts.doorbell.on(`request:${listeningAs}`, () => void pump());
  };
  const tick = (): void => {
    if (stopped) return;
    void pump().finally(() => {
      if (!stopped) timer = clock.setTimeout(tick, pollMs);
    });
  };
  tick();
  return () => {
    stopped = true;
    unsubscribe();
    if (timer !== undefined) clock.clearTimeout(timer);
  };
}

/** Every `scanMs`: claim the sessions with work that no live worker holds (a takeover), and prune old rows. */
function startScanning(parts: Parts, clock: Clock, scanMs: number, onError: (error: unknown) => void) {
  let timer: TimerHandle;
  let stopped = false;
  const scan = async (): Promise<void> => {
    if (!parts.lease.valid()) return;
    const orphans = await orphanedSessions(parts.database, 32);
    await Promise.all(orphans.map((key) => parts.router.claim(key).catch(onError)));
    await pruneWorkers(parts.database, 600_000);
    await pruneConsumers(parts.database.query);
    await parts.database.query(`DELETE FROM cluster_requests WHERE created_at < ${nowMs} - 600000`);
    await pruneJobs(parts.database);
  };
  const tick = (): void => {
    if (stopped) return;
    scan()
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = clock.setTimeout(tick, scanMs);
      });
  };
  tick();
  return () => {
    stopped = true;
    if (timer !== undefined) clock.clearTimeout(timer);
  };
}

/**
 * Serve forwarded calls, take over orphaned sessions and run the cluster's step jobs. The stop function waits for
 * the step jobs still running here: they are aborted and their answers stored before the lease goes.
 */
function startWork(
  ready: Parts,
  settings: {
    timing: ClusterTiming;
    jobs: ClusterJobSettings;
    clock: Clock;
    onError: (error: unknown) => void;
  },
  host: ClusterHost,
  jobHost: StepJobHost,
): { stop: () => Promise<void>; stepJobs: StepJobDeps } {
  const { timing, clock, onError } = settings;
  const stops = [
    startServing(ready, clock, timing.pollMs, onError),
    startScanning(ready, clock, timing.scanMs, onError),
  ];
  const { database, doorbell, lease } = ready;
  const jobs = startStepJobs({
    database,
    doorbell,
    lease,
    clock,
    pollMs: timing.pollMs,
    host: jobHost,
    onError,
    concurrency: settings.jobs.jobConcurrency,
    accepting: () => host.accepting(),
  });
  const stop = async (): Promise<void> => {
    for (const stopOne of stops) stopOne();
    await jobs.stop();
  };
  return { stop, stepJobs: jobs.deps };
}

/** Connect, open the doorbell, and register this worker. */
async function openParts(
  options: ClusterOptions,
  timing: ClusterTiming,
  clock: Clock,
  onError: (error: unknown) => void,
  host: () => ClusterHost,
): Promise<Parts> {
  const database = await openClusterDatabase(options);
  const doorbell = openDoorbell(database, clock, onError);
  const holder: { router?: SessionRouter; consumers?: ConsumerClaims } = {};
  const lease = createWorkerLease({
    database,
    clock,
    timing,
    newWorkerId: () => randomIds('worker'),
    onLost: (previous) => {
      holder.consumers?.lost(previous);
      holder.router?.lost();
    },
    onError,
  });
  const requests: RequestDeps = {
    database,
    doorbell,
    clock,
    pollMs: timing.pollMs,
    fallbackMs: answerFallbackMs(timing),
    workerId: () => lease.workerId,
  };
  const router = createSessionRouter({ database, lease, requests, host });
  holder.router = router;
  const pollMs = timing.pollMs;
  const consumers = createConsumerClaims({ query: database.query, doorbell, lease, clock, pollMs, onError });
  holder.consumers = consumers;
  await lease.start();
  return { database, doorbell, lease, requests, router, consumers };
}

/**
 * Create the cluster side of one runtime process. Nothing connects until `start`; calls made before it wait for
 * it. Worker ids are random UUID-based (never the runtime's injected ids: two processes with
 * sequential ids would collide).
 */
export function createCluster(
  options: ClusterOptions,
  clock: Clock,
  onError: (error: unknown) => void,
): Cluster {
  const timing = clusterTiming(options);
  const jobs = clusterJobSettings(options);
  let parts: Parts | undefined;
  let host: ClusterHost | undefined;
  let stopWork = (): Promise<void> => Promise.resolve();
  let starting: Promise<Parts> | undefined;
  const open = (): Promise<Parts> => openParts(options, timing, clock, onError, () => host as ClusterHost);
  const opened = (): Promise<Parts> => (starting ??= open().then((value) => (parts = value)));
  // Calls wait for `start`: a session is only claimed once there is a host to adopt it.
  const started = createDeferred<Parts>();
  const stepJobs = createDeferred<StepJobDeps>();
  return {
    get workerId() {
      return parts?.lease.workerId ?? '';
    },
    timing,
    jobs,
    async start(given, jobHost) {
      host = given;
      const ready = await opened();
      const work = startWork(ready, { timing, jobs, clock, onError }, given, jobHost);
      stopWork = work.stop;
      stepJobs.resolve(work.stepJobs);
      started.resolve(ready);
    },
    runStep: (job, signal) => stepJobs.promise.then((deps) => runStepJob(deps, job, signal)),
    owns: (key) => parts?.router.owns(key) ?? false,
    claim: (key) => started.promise.then((ready) => ready.router.claim(key)),
    ...clusterConsumers(started.promise),
    connections: opened,
    ...routedCalls(() => parts, started.promise),
    lane(local, laneOptions) {
      return createClusterLane(local, laneOptions, {
        opened,
        clock,
        timing,
        workerId: () => parts?.lease.workerId ?? '',
        onError,
      });
    },
    async close() {
      await stopWork();
      if (starting === undefined) return;
      const started = await starting.catch(() => undefined);
      if (started === undefined) return;
      await started.consumers.close();
      await started.lease.close();
      await started.doorbell.close();
      await started.database.close();
    },
  };
}
