import { openWorkerLedger } from './open-ledger.js';
import { maxDurationMs } from '../core/index.js';
import { createDeferred, type Deferred } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import { createGlobalLane, type LaneStats } from '../lanes/index.js';
import type { TranscriptFork } from '../ledger/index.js';
import { needsApproval } from '../policies/index.js';
import type { RunServices } from '../runner/index.js';
import { createRunWork } from '../runner/index.js';
import { createAuthProfiles, type AuthProfiles } from '../runner/index.js';
import type { ProfileStats } from '../runner/index.js';
import { buildRunServices } from './build-run-services.js';
import { createCorruptRowReporter } from '../events/index.js';
import { createEventBus, type EventBus } from '../events/index.js';
import { streamEvents, type EventStreamOptions } from '../events/index.js';
import { parseSessionKey } from '../actors/index.js';
import { lateBound, type LateBound } from '../core/index.js';
import { forkSession, type ForkOptions } from '../actors/index.js';
import { clusterFace, startClusterWorker, withClusterLane, type ClusterWorker } from '../cluster/index.js';
import { openSubagents } from './subagent-wiring.js';
import { openSessions } from '../actors/index.js';
import { watchRuntimeLedger } from '../actors/index.js';
import { recoverAtStart } from '../actors/index.js';
import { parseRuntimeOptions, type RuntimeConfig, type RuntimeOptions } from './runtime-options.js';
import {
  listPendingCalls,
  listSessionPage,
  type PendingCall,
  type SessionPage,
  type SessionPageOptions,
} from '../actors/index.js';
import type { RuntimeInternals } from '../actors/index.js';
import { createSessionHandle, type Session } from './session-handle.js';
import { createSessionTools, type SessionTools } from '../actors/index.js';
import { beginShutdown, shutdown, type ShutdownSteps } from './shutdown.js';
import { releaseAfterFailedShutdown } from './shutdown-failure.js';
import { createMessageAttachments } from '../actors/index.js';
import { resolveAuthority } from '../actors/index.js';
import { runRoleLayers, type RuntimeAuthority } from '../actors/index.js';
import { resolveToolPolicy, type ToolPolicyLayer } from '../policies/index.js';
import type { LiveSession } from '../actors/index.js';

/** The runtime: sessions, their event streams, and shutdown. */
export interface Runtime {
  /** Get or create a session (cheap; hydrates from the ledger on first use). Throws `invalid_input` on a bad key. */
  session(key: string): Session;
  /**
   * Create `childKey` as a fork of `parentKey`: its transcript starts as the parent's up to and including
   * `upToRunId` (default: the parent's last ended run; a run still open is never inherited), stored by reference;
   * the parent's queue, pauses and dedupe window are not copied. Unknown parent: `not_found`; a child key already in
   * use: `invalid_input`; nothing is written either way. Resolves with the fork as recorded.
   */
  fork(parentKey: string, childKey: string, options?: ForkOptions): Promise<TranscriptFork>;
  /** Replay every session's recorded events after `after`, then follow live ones. */
  events(options?: EventStreamOptions): AsyncIterable<RuntimeEvent>;
  /**
   * Live sessions, lane load (the global lane and its provider lanes by name; the subagent lane apart, as
   * `subagents`) and auth profiles (attempts since start, cooldowns), for dashboards.
   */
  stats(): {
    liveSessions: number;
    lanes: Record<string, LaneStats>;
    subagents: LaneStats;
    profiles: Record<string, ProfileStats>;
  };
  /** A page of sessions by key (stored and live): status and last update. Bad options throw `invalid_input`. */
  sessions(options?: SessionPageOptions): Promise<SessionPage>;
  /** Every call waiting for an approval or a deferred tool result, across sessions. */
  pendingCalls(): Promise<PendingCall[]>;
  /**
   * The cursor of the last event delivered to streams: `events({ after: eventCursor() })` taken before an action
   * sees every event that action causes. 0 until the runtime has read the ledger's end at start.
   */
  eventCursor(): number;
  /**
   * Stop intake, let active runs finish (aborting those still running after `timeoutMs`), persist every session
   * and close the ledger. Queued messages stay pending in the ledger. @default timeoutMs 30000
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
  /** The roles senders may have, highest first, and the role of a message that names none (`authority` option). */
  readonly authority: { readonly roles: readonly string[]; readonly defaultRole: string };
}

/** Check the approval rules once, at construction: a bad `alwaysApprove` pattern throws `invalid_input` here. */
function checkApprovalRules(config: RuntimeConfig): void {
  needsApproval({
    tool: '',
    risk: 'low',
    alwaysApprove: config.approvals.alwaysApprove,
    remembered: { run: [], session: [] },
  });
}

/** Where a runtime stands on closing: `closing` is set once `close()` was called. */
interface ClosingState {
  closing: Promise<void> | undefined;
  readonly closed: Deferred<void>;
}

/** What the runtime opens before its sessions: the ledger, the bus, and the run services over them. */
interface RuntimeBase {
  readonly bus: EventBus;
  readonly services: RunServices;
  readonly profiles: AuthProfiles;
  readonly sessionTools: SessionTools;
  /** The runtime's internals, wired once the sessions exist. */
  readonly internals: LateBound<RuntimeInternals>;
  /** Reports a background failure (a corrupt row once, as an event on its session too). */
  readonly report: (error: unknown) => void;
  readonly steps: Omit<ShutdownSteps, 'stopTimers'> & { readonly startRetention: () => () => void };
  /** The cluster side, when the ledger is Postgres (docs/distributed.md). */
  readonly worker: ClusterWorker | undefined;
  /** The roles of senders and what each may do (docs/semantics.md, "Authority in group chats"). */
  readonly authority: RuntimeAuthority;
}

/** The runtime's authority; a role layer with a bad glob or an unknown group throws invalid_input here. */
function openAuthority(config: RuntimeConfig): RuntimeAuthority {
  const authority = resolveAuthority(config.authority);
  resolveToolPolicy([], Object.values(authority.tools), config.toolGroups);
  return authority;
}

/**
 * The tools of a session's run: the runtime's layers, the session's own, then `last` (the subagent layers, then the
 * run's role layers: a run has the tools of the least authority among its messages, never more).
 */
function toolsOfSession(
  sessionTools: SessionTools,
  authority: RuntimeAuthority,
  session: LiveSession | undefined,
  subagentLayers: readonly ToolPolicyLayer[],
) {
  const context = session?.actor.getSnapshot().context;
  const roleLayers = runRoleLayers(authority, context?.run ?? null);
  return sessionTools.registryFor(context?.toolPolicy, [...subagentLayers, ...roleLayers]);
}

/** Open the ledger, the bus, the lanes and the auth profiles, and build the run services over them. */
function openBase(config: RuntimeConfig, state: ClosingState): RuntimeBase {
  const { clock } = config;
  const internals = lateBound<RuntimeInternals>('the runtime internals');
  const authority = openAuthority(config);
  const subagents = openSubagents(config, internals);
  // Bad policy entries throw invalid_input here, at construction, before the ledger opens.
  const sessionTools = createSessionTools({
    tools: subagents.tools,
    layers: config.toolPolicy,
    groups: config.toolGroups,
  });
  const opened = openWorkerLedger(config, clock, (error) => onError(error));
  const late = { bus: () => bus, registry: () => internals.get().registry };
  const { ledger, health, onError } = watchRuntimeLedger(config, opened, late);
  const live = (sessionKey: string) => late.registry().live(sessionKey);
  const bus = createEventBus({ ledger, clock, onError });
  const report = createCorruptRowReporter({ ledger, bus, live, onError });
  const stopCorruptReports = ledger.onCorruptRow?.(report);
  const globalLane = withClusterLane(opened.worker, createGlobalLane({ ...config.globalLane, clock }));
  const profiles = createAuthProfiles({
    profiles: config.authProfiles,
    order: config.authOrder,
    perModelCooldown: config.failover.perModelCooldown,
    ledger,
    clock,
    onError,
  });
  const toolsFor = (sessionKey: string) =>
    toolsOfSession(sessionTools, authority, live(sessionKey), subagents.layersFor(sessionKey));
  const accepting = () => state.closing === undefined;
  const toolByName = (name: string) => sessionTools.byName(name);
  const parts = {
    ledger,
    bus,
    profiles,
    globalLane,
    toolsFor,
    toolByName,
    live,
    accepting,
    onError,
    subagents: subagents.port,
    stepJobs: opened.worker?.stepJobs,
  };
  const services = { ...buildRunServices(config, parts), ledgerGuard: health };
  const steps = {
    startRetention: () => opened.startRetention(onError),
    closeLanes: () => Promise.all([globalLane.close(), subagents.port.lane.close()]).then(() => undefined),
    markClosed: () => state.closed.resolve(),
    releaseLedger: async () => {
      stopCorruptReports?.();
      if (opened.owned) await ledger.close();
    },
  };
  const { worker } = opened;
  return { bus, services, profiles, sessionTools, internals, report, steps, worker, authority };
}

/** Wire the session side over the base: machine, registry, sweeper, the gate, and the internals handles share. */
function wireSessions(config: RuntimeConfig, base: RuntimeBase, state: ClosingState) {
  const { services, bus, profiles, report } = base;
  const isClosing = () => state.closing !== undefined;
  const { registry, sweeper } = openSessions(config, services, {
    internals: base.internals,
    isClosing,
    onCorrupt: report,
    attribution: base.authority.attribution,
  });
  const { ledger, clock, onError } = services;
  const starting = { ledger, clock, bus, registry, onError: report, recovery: config.recovery };
  const handleOf = (key: string) => createSessionHandle(base.internals.get(), key);
  const ready = profiles.load().then(() => {
    if (base.worker !== undefined) return startClusterWorker(base.worker, base.internals.get(), handleOf);
    return recoverAtStart({ ...starting, subagents: config.subagents.enabled }, base.internals);
  });
  // A failed startup (an unreachable ledger) is reported once; every call then rejects with its error.
  ready.catch(report);
  registry.openAfter(ready);
  const stopRetention = base.steps.startRetention();
  const internals: RuntimeInternals = {
    services,
    bus,
    registry,
    withSession: registry.enter,
    ready,
    recovery: config.recovery,
    admission: {
      clock,
      ids: services.ids,
      ledger,
      emit: (session, event) => bus.emit(session, event),
      queueDefaults: config.queue,
      interruptWaitMs: config.limits.interruptWaitMs,
      authority: base.authority,
      onError,
      attachments: createMessageAttachments({
        limits: config.attachments,
        workspace: services.workspace,
        clock,
        providers: config.providers,
        models: [config.model, ...config.model.fallbacks],
      }),
    },
    closed: state.closed.promise,
    isClosed: isClosing,
    knowsProfile: (profileId) => profiles.knows(profileId),
    emit: (session, event) => bus.emit(session, event),
    sessionTools: base.sessionTools,
    work: createRunWork(),
  };
  base.internals.set(internals);
  const stopTimers = (): void => {
    sweeper.stop();
    stopRetention();
  };
  return { internals, ready, steps: { ...base.steps, stopTimers } };
}

/** Check `close()`'s timeout: milliseconds from 0 to the longest a timer can wait. */
function checkCloseTimeout(timeoutMs: unknown): asserts timeoutMs is number {
  if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0 && timeoutMs <= maxDurationMs)) {
    throw new RuntimeError(
      'invalid_input',
      `close: timeoutMs must be milliseconds from 0 to ${maxDurationMs}`,
    );
  }
}

/** Create a runtime. Bad configuration throws `invalid_input` naming the field. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const config = parseRuntimeOptions(options);
  checkApprovalRules(config);
  const state: ClosingState = { closing: undefined, closed: createDeferred<void>() };
  const base = openBase(config, state);
  const { internals, ready, steps } = wireSessions(config, base, state);
  const { services, bus } = internals;
  const { ledger, clock, onError, globalLane } = services;
  const face = base.worker === undefined ? undefined : clusterFace(base.worker, internals);
  const { roles, defaultRole } = base.authority;
  return {
    authority: { roles, defaultRole },
    session(key) {
      const handle = createSessionHandle(internals, parseSessionKey(key));
      return face?.session(handle) ?? handle;
    },
    fork: (parentKey, childKey, forkOptions) => forkSession(internals, parentKey, childKey, forkOptions),
    events: (eventOptions = {}) =>
      face?.events(eventOptions) ??
      streamEvents({ ledger, bus, clock, closed: state.closed.promise, onError }, eventOptions),
    stats: () => ({
      liveSessions: internals.registry.size,
      lanes: globalLane.stats(),
      subagents: base.services.subagents.lane.stats(),
      profiles: base.profiles.stats(),
    }),
    sessions: (pageOptions) => listSessionPage(internals, pageOptions, face?.statuses),
    pendingCalls: () => listPendingCalls(internals),
    eventCursor: () => (face?.bus ?? bus).delivered,
    close(closeOptions) {
      const timeoutMs = closeOptions?.timeoutMs ?? 30_000;
      try {
        checkCloseTimeout(timeoutMs);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      services.ledgerGuard?.stop(); // Runs held for a failed ledger settle (left open: closed as crashed at the next start).
      // Consumer loops get no event once close began, even before the work below settles.
      beginShutdown(internals);
      // A failed recovery still lets close() release the ledger.
      state.closing ??= ready
        .catch(onError)
        .then(() => shutdown(internals, steps, timeoutMs))
        .catch((failure: unknown) => releaseAfterFailedShutdown(steps, failure))
        .finally(() => face?.close());
      return state.closing;
    },
  };
}
