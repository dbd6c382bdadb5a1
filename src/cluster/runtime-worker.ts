import { createClusterLedger, type ClusterLedger } from './cluster-ledger.js';
import { consumerKey } from './consumer-claims.js';
import { createCluster, type Cluster, type ClusterHost } from './create-cluster.js';
import type { ClusterWorkerOptions } from './cluster-options.js';
import type { Clock } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { GlobalLane } from '../lanes/index.js';
import type { Ledger } from '../ledger/index.js';
import type { PostgresLedger, PostgresLedgerOptions } from '../ledger/index.js';
import type { StepToolRunner } from '../plans/index.js';
import { defaultRecoveryPolicy, recoverOpenRuns } from '../runner/index.js';
import { resumeCrashedPlan } from '../runner/index.js';
import { createEventTail } from './cluster-events.js';
import { clusterSession, serveForwarded, statusesKind } from './cluster-session.js';
import type { EventBus } from '../events/index.js';
import type { ClaimAcross } from '../events/index.js';
import { streamEvents, type EventSource, type EventStreamOptions } from '../events/index.js';
import type { RuntimeInternals } from '../actors/index.js';
import { abortSession, sessionStatus, type SessionStatus } from '../actors/index.js';
import { sessionScopeOf } from '../actors/index.js';
import type { Session } from '../actors/index.js';

/** The cluster side of a runtime on the Postgres ledger: the cluster, and the fenced ledger the runtime uses. */
export interface ClusterWorker {
  readonly cluster: Cluster;
  readonly ledger: ClusterLedger;
  /** The Postgres ledger under the fences (claims bump its epochs). */
  readonly raw: PostgresLedger;
  readonly pollMs: number;
  /** Plan steps as jobs any worker may run; undefined with `planSteps: 'inline'`. */
  readonly stepJobs: StepToolRunner | undefined;
  /** The global lane with the cluster-wide cap and rate over the local one. */
  lane(local: GlobalLane): GlobalLane;
}

/** What joining the cluster reads of the runtime's configuration. */
export interface WorkerConfig {
  /** The runtime's ledger option: a cluster worker's is `{ postgres: … }`. */
  readonly ledger: unknown;
  readonly cluster: ClusterWorkerOptions | false;
  readonly globalLane: Parameters<Cluster['lane']>[1];
}

function isPostgresLedger(ledger: Ledger): ledger is PostgresLedger {
  const candidate = ledger as Partial<PostgresLedger>;
  return typeof candidate.claimSession === 'function' && typeof candidate.fenced === 'function';
}

/**
 * Join the cluster when the runtime opened the Postgres ledger (and `cluster` is not `false`): undefined
 * otherwise. Nothing connects here; the cluster opens with the runtime's start.
 */
export function openClusterWorker(
  config: WorkerConfig,
  ledger: Ledger,
  clock: Clock,
  onError: (error: unknown) => void,
): ClusterWorker | undefined {
  const option = config.ledger;
  if (config.cluster === false || typeof option !== 'object' || option === null || !('postgres' in option)) {
    return undefined;
  }
  if (!isPostgresLedger(ledger)) throw new RuntimeError('internal', 'the Postgres ledger has no fencing');
  const { postgres } = option as { readonly postgres: PostgresLedgerOptions };
  const cluster = createCluster({ ...postgres, ...config.cluster }, clock, onError);
  const wrapped = createClusterLedger({ ledger });
  const { globalLane } = config;
  return {
    cluster,
    ledger: wrapped,
    raw: ledger,
    pollMs: cluster.timing.pollMs,
    stepJobs: cluster.jobs.planSteps === 'jobs' ? (job, signal) => cluster.runStep(job, signal) : undefined,
    lane: (local) => cluster.lane(local, globalLane),
  };
}

/**
 * What this worker does for the cluster: adopt a claimed session, serve a forwarded call, drop lost sessions.
 * `acquire` brings a session live without claiming it (the adoption runs inside the claim).
 */
function hostOf(
  worker: ClusterWorker,
  internals: RuntimeInternals,
  handleOf: (key: string) => Session,
  acquire: RuntimeInternals['registry']['acquire'],
): ClusterHost {
  const { clock, onError } = internals.services;
  return {
    async adopt(sessionKey, epoch, workerId) {
      // A session a lost lease left live here is stale: its record in the ledger is the truth now.
      internals.registry.evict(sessionKey);
      worker.ledger.hold(sessionKey, epoch, workerId);
      const events = internals.bus;
      const recovered = await recoverOpenRuns(
        { ledger: worker.ledger, clock, events, onError },
        {
          policy: internals.recovery ?? defaultRecoveryPolicy,
          reason: 'takeover',
          only: new Set([sessionKey]),
          resumePlans: true,
        },
      );
      const plans = recovered.resumed.filter((run) => run.provider === 'plan');
      for (const run of recovered.resumed) internals.registry.resumeOnLoad(run);
      // Not the registry's own `acquire`, which claims a session this worker does not hold: when the lease was
      // lost meanwhile, that claim would wait for this one to end, which waits for it.
      const session = await acquire(sessionKey);
      if (!worker.ledger.holds(sessionKey, epoch)) {
        // The lease was lost during the adoption (the session dropped): it is not brought live here.
        internals.registry.evict(sessionKey);
        throw new RuntimeError('fenced', `session "${sessionKey}" was lost while this worker adopted it`, {
          details: { sessionKey },
        });
      }
      // A plan run the dead worker left open goes on here as a run of its session's machine, as after a crash.
      for (const run of plans) resumeCrashedPlan(sessionScopeOf(internals, session), run).catch(onError);
    },
    serve: (request) => serveForwarded(handleOf, request),
    accepting: () => !internals.isClosed(),
    drop(sessionKeys) {
      for (const key of sessionKeys) {
        worker.ledger.release(key);
        abortSession(internals, key, 'this worker lost the session').catch(() => undefined);
        internals.registry.evict(key);
      }
    },
  };
}

/**
 * Start the worker (instead of single-process recovery): number events after the log's end, register, then serve
 * forwarded calls and take over the sessions of dead workers — their open runs resumed (or closed as crashed past
 * the recovery budget), their pending messages run in order, their paused runs still paused.
 */
export async function startClusterWorker(
  worker: ClusterWorker,
  internals: RuntimeInternals,
  handleOf: (key: string) => Session,
): Promise<void> {
  internals.bus.seek(await worker.ledger.lastCursor());
  const acquire = claimOnAcquire(worker, internals);
  const { toolByName, random } = internals.services;
  await worker.cluster.start(hostOf(worker, internals, handleOf, acquire), { toolByName, random });
}

/**
 * A session brought live here without a routed call (a subagent's child session, started by its parent's run) is
 * claimed first, so its writes go through its fence; one a live worker holds elsewhere is refused `fenced`.
 * Returns the registry's `acquire` without the claim.
 */
function claimOnAcquire(
  worker: ClusterWorker,
  internals: RuntimeInternals,
): RuntimeInternals['registry']['acquire'] {
  const { registry } = internals;
  const acquire = registry.acquire.bind(registry);
  registry.acquire = async (key) => {
    if (!worker.cluster.owns(key) && !(await worker.cluster.claim(key))) {
      throw new RuntimeError('fenced', `session "${key}" is held by another worker`, {
        details: { sessionKey: key },
      });
    }
    return acquire(key);
  };
  return acquire;
}

/**
 * What a cluster worker's runtime shows: routed session handles, and event streams of every worker's events whose
 * durable consumers one worker of the cluster reads at a time.
 */
export interface ClusterFace {
  session(local: Session): Session;
  /** `runtime.events()` of this worker. */
  events(options: EventStreamOptions): AsyncIterable<RuntimeEvent>;
  /** The bus streams follow: the log's tail, in cursor order across workers. */
  readonly bus: EventBus;
  /** Each key's `status()` as the worker that holds it answers (this worker's for those no other live one holds). */
  readonly statuses: (keys: readonly string[]) => Promise<SessionStatus[]>;
  /** Leave the cluster (after the runtime's shutdown): this worker's sessions are free at once. */
  close(): Promise<void>;
}

/** A durable consumer read by one worker of the cluster at a time: the wait ends with the stream or the runtime. */
function claimAcrossOf(cluster: Cluster, closed: Promise<void>): ClaimAcross {
  const closing = new AbortController();
  void closed.then(() => closing.abort());
  return (consumer, sessionKey, signal) =>
    cluster.holdConsumer(
      consumerKey(consumer, sessionKey),
      signal === undefined ? closing.signal : AbortSignal.any([signal, closing.signal]),
    );
}

/** The face of a started worker's runtime. */
export function clusterFace(worker: ClusterWorker, internals: RuntimeInternals): ClusterFace {
  const { ledger, clock, onError } = internals.services;
  const tail = createEventTail({
    ledger,
    bus: internals.bus,
    clock,
    pollMs: worker.pollMs,
    doorbell: () => worker.cluster.connections().then((opened) => opened.doorbell),
    onError,
  });
  const closed = internals.closed;
  const source: EventSource = {
    ledger,
    bus: tail,
    clock,
    closed,
    onError,
    claimAcross: claimAcrossOf(worker.cluster, closed),
  };
  return {
    session(local) {
      const routed = clusterSession(local, worker.cluster, internals.ready);
      const events: Session['events'] = (options = {}) =>
        streamEvents(source, { ...options, sessionKey: local.key });
      return { ...routed, events };
    },
    events: (options) => streamEvents(source, options),
    bus: tail,
    statuses: (keys) =>
      worker.cluster.askMany(statusesKind, keys, (rest) =>
        Promise.resolve(rest.map((key) => sessionStatus(internals, key))),
      ),
    async close() {
      tail.stop();
      await worker.cluster.close();
    },
  };
}

/** The global lane, cluster-wide on a cluster worker. */
export function withClusterLane(worker: ClusterWorker | undefined, local: GlobalLane): GlobalLane {
  return worker === undefined ? local : worker.lane(local);
}
