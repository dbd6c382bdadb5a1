import { isRunPaused, type RunPaused, type RunResult, type RunSummary } from '../actors/run-summary.js';
import { createIdleSweeper } from '../actors/idle-sweeper.js';
import { createSessionMachine } from '../actors/session-machine.js';
import { createSessionRegistry, type LiveSession } from '../actors/session-registry.js';
import { maxDurationMs } from '../core/clock.js';
import { createDeferred } from '../core/deferred.js';
import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import { createGlobalLane, type LaneStats } from '../lanes/global-lane.js';
import { createSessionLane } from '../lanes/session-lane.js';
import { maxAttempts } from '../policies/attempt-budget.js';
import { needsApproval } from '../policies/approval-rules.js';
import { resolveQueueSettings } from '../policies/queue-settings.js';
import type { ModelCandidate } from '../runner/failover-context.js';
import { createAuthProfiles } from './auth-profiles.js';
import type { ProfileStats } from './auth-profile-stats.js';
import { isRunActive } from '../policies/queue-admission.js';
import type { ModelProvider } from '../providers/model-provider.js';
import { createEventBus } from './event-bus.js';
import { streamEvents, type EventStreamOptions } from './event-stream.js';
import { parseSessionKey } from './inbound-message.js';
import { openRuntimeLedger } from './open-ledger.js';
import { recoverAtStart } from './recover.js';
import { createCorruptRowReporter } from './corrupt-rows.js';
import { createRunExecutor } from './run-executor.js';
import { parseRuntimeOptions, type RuntimeConfig, type RuntimeOptions } from './runtime-options.js';
import type { RuntimeInternals } from './runtime-internals.js';
import { activityOf } from './session-activity.js';
import { createSessionGate } from './session-gate.js';
import { createSessionHandle, type Session } from './session-handle.js';
import { waitForRun } from './wait-for-run.js';
import { createSessionTools } from './session-tools.js';
import { settleActivePlans } from './plan-run.js';
import { endHeldPlan } from './plan-end.js';
import { settleActiveUndos } from './undo-run.js';

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

/** Create a runtime. Bad configuration throws `invalid_input` naming the field. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const config = parseRuntimeOptions(options);
  const { clock, ids, limits } = config;
  checkApprovalRules(config);
  // Bad policy entries throw invalid_input here, at construction.
  const sessionTools = createSessionTools({
    tools: config.tools,
    layers: config.toolPolicy,
    groups: config.toolGroups,
  });
  const toolsFor = (sessionKey: string) => sessionTools.registryFor(registry.live(sessionKey)?.toolPolicy);
  const { ledger, owned, startRetention } = openRuntimeLedger(config, clock);
  const onError =
    config.onError ??
    ((error: unknown) => {
      console.error('agentlanes: background failure:', error instanceof Error ? error.message : error);
    });
  const bus = createEventBus({ ledger, clock, onError });
  // A corrupt row is reported once, to onError and as a ledger.corrupt event on its session.
  const report = createCorruptRowReporter({ ledger, bus, live: (key) => registry.live(key), onError });
  const stopCorruptReports = ledger.onCorruptRow?.(report);
  const closedSignal = createDeferred<void>();
  let closing: Promise<void> | undefined;
  const sessionLane = createSessionLane();
  const globalLane = createGlobalLane({ ...config.globalLane, clock });
  const candidates = [config.model, ...config.model.fallbacks].map((ref) => ({
    providerName: ref.provider,
    provider: config.providers[ref.provider] as ModelProvider,
    model: ref.model,
  })) as [ModelCandidate, ...ModelCandidate[]];
  const profiles = createAuthProfiles({
    profiles: config.authProfiles,
    order: config.authOrder,
    perModelCooldown: config.failover.perModelCooldown,
    ledger,
    clock,
    onError,
  });
  const emitByKey = (sessionKey: string, event: Parameters<RuntimeInternals['emit']>[1]): void => {
    const live = registry.live(sessionKey);
    if (live === undefined) {
      onError(new Error(`event ${event.type} for session "${sessionKey}", which is not live`));
      return;
    }
    // A run's own events: those announcing its pause or end wait until the machine adopted it.
    bus.emit(live, event, { untilAdopted: true });
  };
  const startRun = createRunExecutor({
    ledger,
    sessionLane,
    globalLane,
    clock,
    emit: emitByKey,
    candidates,
    thinking: config.model.thinking,
    profiles,
    prices: (provider, model) => config.prices[`${provider}/${model}`],
    random: config.random,
    maxAttempts: config.failover.maxAttempts ?? maxAttempts(config.authProfiles.length),
    maxWaitMs: config.failover.maxWaitMs,
    compactor: config.compactor,
    system: config.systemPrompt,
    toolsFor,
    alwaysApprove: config.approvals.alwaysApprove,
    limits,
    blocks: config.blocks,
    accepting: () => closing === undefined,
    onError,
  });
  const machine = createSessionMachine({
    clock,
    ids,
    startRun,
    onIdle: (sessionKey) => sweeper.markIdle(sessionKey),
    onRunEnded: (sessionKey: string, summary: RunSummary) => notifyWaiters(sessionKey, summary),
    onRunPaused: (sessionKey: string, paused: RunPaused) => notifyWaiters(sessionKey, paused),
    pauseTimeoutMs: limits.pauseTimeoutMs,
    onPlanStopped: (sessionKey, result) => {
      const live = registry.live(sessionKey);
      if (live !== undefined) answerWaiters(live, result);
    },
    endPlan: (sessionKey, runId, status, reason) => {
      endHeldPlan(internals, sessionKey, runId, status, reason).catch(onError);
    },
  });
  /**
   * The machine adopted a run's pause or end: the events announcing it go out now, and the waiters of this
   * moment are answered a macrotask later, so a subscriber has seen those events when waitForEnd() answers.
   */
  function notifyWaiters(sessionKey: string, result: RunResult): void {
    bus.adopted(sessionKey);
    const live = registry.live(sessionKey);
    if (live === undefined) return;
    live.unobservedEnd = isRunPaused(result) || live.waiters !== undefined ? undefined : result;
    answerWaiters(live, result);
  }
  /** Answer the session's `waitForEnd()` callers of this moment, a macrotask later (a plan's pause or end too). */
  function answerWaiters(live: LiveSession, result: RunResult): void {
    const waiters = live.waiters;
    live.waiters = undefined;
    if (waiters === undefined) return;
    setImmediate(() => {
      for (const waiter of waiters) waiter(result);
    });
  }
  const runtimeDefaults = resolveQueueSettings({ runtime: config.queue });
  const registry = createSessionRegistry({
    machine,
    ledger,
    clock,
    defaults: {
      debounceMs: runtimeDefaults.debounceMs,
      maxWaitMs: runtimeDefaults.maxWaitMs,
      pauseTimeoutMs: limits.pauseTimeoutMs,
    },
    onCorrupt: report,
  });
  const ready = profiles.load().then(() => recoverAtStart({ ledger, clock, bus, registry, onError: report }));
  const stopRetention = startRetention(onError);
  const sweeper = createIdleSweeper({
    clock,
    idleMs: config.sessions.hibernateAfterMs,
    onDue: (sessionKey) => {
      // A plan run keeps its session live: its events go to this session's numbering.
      if (closing === undefined && !internals.activePlans.has(sessionKey))
        registry.hibernate(sessionKey).catch(onError);
    },
  });
  const internals: RuntimeInternals = {
    clock,
    ledger,
    bus,
    registry,
    withSession: createSessionGate(registry, ready),
    admission: {
      clock,
      ids,
      ledger,
      emit: (session, event) => bus.emit(session, event),
      queueDefaults: config.queue,
      interruptWaitMs: limits.interruptWaitMs,
      onError,
    },
    closed: closedSignal.promise,
    isClosed: () => closing !== undefined,
    knowsProfile: (profileId) => profiles.knows(profileId),
    emit: (session: LiveSession, event) => bus.emit(session, event),
    toolsFor,
    sessionTools,
    sessionLane,
    ids,
    random: config.random,
    alwaysApprove: config.approvals.alwaysApprove,
    activePlans: new Map(),
    activeUndos: new Set(),
    resumingPlans: new Set(),
    onError,
  };

  async function shutdown(timeoutMs: number): Promise<void> {
    // Paused runs stay paused: the ledger keeps them, and the next start brings them back.
    const active = registry.all().filter((live) => {
      const activity = activityOf(live.actor.getSnapshot());
      return (
        isRunActive(activity) && activity !== 'awaiting_approval' && activity !== 'awaiting_tool_results'
      );
    });
    await Promise.all(
      active.map(async (live) => {
        const result = await waitForRun(internals, live, timeoutMs);
        if (result.status !== 'timeout') return;
        live.actor.send({ type: 'ABORT', status: 'aborted', reason: 'the runtime is closing' });
        await waitForRun(internals, live, timeoutMs);
      }),
    );
    await settleActivePlans(internals, timeoutMs);
    await settleActiveUndos(internals, timeoutMs);
    sweeper.stop();
    stopRetention();
    await registry.stopAll();
    await globalLane.close();
    closedSignal.resolve();
    await bus.flushed();
    stopCorruptReports?.();
    if (owned) await ledger.close();
  }

  return {
    session: (key) => createSessionHandle(internals, parseSessionKey(key)),
    events: (eventOptions = {}) =>
      streamEvents({ ledger, bus, clock, closed: closedSignal.promise, onError }, eventOptions),
    stats: () => ({ liveSessions: registry.size, lanes: globalLane.stats(), profiles: profiles.stats() }),
    close(closeOptions) {
      const timeoutMs = closeOptions?.timeoutMs ?? 30_000;
      if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0 && timeoutMs <= maxDurationMs)) {
        return Promise.reject(
          new RuntimeError(
            'invalid_input',
            `close: timeoutMs must be milliseconds from 0 to ${maxDurationMs}`,
          ),
        );
      }
      // A failed recovery still lets close() release the ledger.
      closing ??= ready.catch(onError).then(() => shutdown(timeoutMs));
      return closing;
    },
  };
}
