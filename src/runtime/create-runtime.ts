import { maxDurationMs } from '../core/clock.js';
import { createDeferred, type Deferred } from '../core/deferred.js';
import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import { createGlobalLane, type LaneStats } from '../lanes/global-lane.js';
import { createSessionLane } from '../lanes/session-lane.js';
import { needsApproval } from '../policies/approval-rules.js';
import type { RunServices } from '../runner/run-services.js';
import { createRunWork } from '../runner/run-work.js';
import { createAuthProfiles, type AuthProfiles } from '../runner/auth-profiles.js';
import type { ProfileStats } from '../runner/auth-profile-stats.js';
import { buildRunServices } from './build-run-services.js';
import { createCorruptRowReporter } from './corrupt-rows.js';
import { createEventBus, type EventBus } from './event-bus.js';
import { streamEvents, type EventStreamOptions } from './event-stream.js';
import { parseSessionKey } from './inbound-message.js';
import { lateBound, type LateBound } from './late-bound.js';
import { openRuntimeLedger } from './open-ledger.js';
import { openSessions } from './open-sessions.js';
import { recoverAtStart } from './recover.js';
import { parseRuntimeOptions, type RuntimeConfig, type RuntimeOptions } from './runtime-options.js';
import type { RuntimeInternals } from './runtime-internals.js';
import { createSessionGate } from './session-gate.js';
import { createSessionHandle, type Session } from './session-handle.js';
import { createSessionTools, type SessionTools } from './session-tools.js';
import { shutdown, type ShutdownSteps } from './shutdown.js';

/** The runtime: sessions, their event streams, and shutdown. */
export interface Runtime {
  /** Get or create a session (cheap; hydrates from the ledger on first use). Throws `invalid_input` on a bad key. */
  session(key: string): Session;
  /** Replay every session's recorded events after `after`, then follow live ones. */
  events(options?: EventStreamOptions): AsyncIterable<RuntimeEvent>;
  /** Live sessions, lane load and auth profiles (attempts since start, cooldowns), for dashboards. */
  stats(): { liveSessions: number; lanes: Record<string, LaneStats>; profiles: Record<string, ProfileStats> };
  /**
   * Stop intake, let active runs finish (aborting those still running after `timeoutMs`), persist every session
   * and close the ledger. Queued messages stay pending in the ledger. @default timeoutMs 30000
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
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
}

/** Report a background failure when the options name no `onError`. */
function reportToConsole(error: unknown): void {
  console.error('agentlanes: background failure:', error instanceof Error ? error.message : error);
}

/** Open the ledger, the bus, the lanes and the auth profiles, and build the run services over them. */
function openBase(config: RuntimeConfig, state: ClosingState): RuntimeBase {
  const { clock } = config;
  // Bad policy entries throw invalid_input here, at construction, before the ledger opens.
  const sessionTools = createSessionTools({
    tools: config.tools,
    layers: config.toolPolicy,
    groups: config.toolGroups,
  });
  const { ledger, owned, startRetention } = openRuntimeLedger(config, clock);
  const onError = config.onError ?? reportToConsole;
  const internals = lateBound<RuntimeInternals>('the runtime internals');
  const live = (sessionKey: string) => internals.get().registry.live(sessionKey);
  const bus = createEventBus({ ledger, clock, onError });
  const report = createCorruptRowReporter({ ledger, bus, live, onError });
  const stopCorruptReports = ledger.onCorruptRow?.(report);
  const sessionLane = createSessionLane();
  const globalLane = createGlobalLane({ ...config.globalLane, clock });
  const profiles = createAuthProfiles({
    profiles: config.authProfiles,
    order: config.authOrder,
    perModelCooldown: config.failover.perModelCooldown,
    ledger,
    clock,
    onError,
  });
  const toolsFor = (sessionKey: string) =>
    sessionTools.registryFor(live(sessionKey)?.actor.getSnapshot().context.toolPolicy);
  const accepting = () => state.closing === undefined;
  const toolByName = (name: string) => sessionTools.byName(name);
  const parts = {
    ledger,
    bus,
    profiles,
    sessionLane,
    globalLane,
    toolsFor,
    toolByName,
    live,
    accepting,
    onError,
  };
  const services = buildRunServices(config, parts);
  const steps = {
    startRetention: () => startRetention(onError),
    closeLanes: () => globalLane.close(),
    markClosed: () => state.closed.resolve(),
    releaseLedger: async () => {
      stopCorruptReports?.();
      if (owned) await ledger.close();
    },
  };
  return { bus, services, profiles, sessionTools, internals, report, steps };
}

/** Wire the session side over the base: machine, registry, sweeper, the gate, and the internals handles share. */
function wireSessions(config: RuntimeConfig, base: RuntimeBase, state: ClosingState) {
  const { services, bus, profiles, report } = base;
  const isClosing = () => state.closing !== undefined;
  const { registry, sweeper } = openSessions(config, services, {
    bus,
    internals: base.internals,
    isClosing,
    onCorrupt: report,
  });
  const { ledger, clock, onError } = services;
  const ready = profiles.load().then(() => recoverAtStart({ ledger, clock, bus, registry, onError: report }));
  const stopRetention = base.steps.startRetention();
  const internals: RuntimeInternals = {
    services,
    bus,
    registry,
    withSession: createSessionGate(registry, ready),
    admission: {
      clock,
      ids: services.ids,
      ledger,
      emit: (session, event) => bus.emit(session, event),
      queueDefaults: config.queue,
      interruptWaitMs: config.limits.interruptWaitMs,
      onError,
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
  return {
    session: (key) => createSessionHandle(internals, parseSessionKey(key)),
    events: (eventOptions = {}) =>
      streamEvents({ ledger, bus, clock, closed: state.closed.promise, onError }, eventOptions),
    stats: () => ({
      liveSessions: internals.registry.size,
      lanes: globalLane.stats(),
      profiles: base.profiles.stats(),
    }),
    close(closeOptions) {
      const timeoutMs = closeOptions?.timeoutMs ?? 30_000;
      try {
        checkCloseTimeout(timeoutMs);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      // A failed recovery still lets close() release the ledger.
      state.closing ??= ready.catch(onError).then(() => shutdown(internals, steps, timeoutMs));
      return state.closing;
    },
  };
}
