import {
  type LiveSession,
  type SessionRegistry,
  createIdleSweeper,
  type IdleSweeper,
  createSessionRegistry,
} from './session-registry.js';
import {
  RuntimeError,
  type EventInput,
  type LateBound,
  type Clock,
  type IdGenerator,
} from '../core/index.js';
import {
  type RunServices,
  type RunWork,
  type RecoveryPolicy,
  type SessionScope,
  type SessionControl,
  endHeldPlan,
  endPausedPlan,
  workEnded,
  type PlanEnding,
  createRunExecutor,
} from '../runner/index.js';
import type { SessionTools } from './session-api.js';
import type { AdmissionDeps } from './admit-message.js';
import type { EventBus } from '../events/index.js';
import { pausedPlanOf, stepsFromEvents } from './session-pause.js';
import { decideInto } from './operator-answers.js';
import { planEndWritten } from './session-runs.js';
import { createSessionMachine } from './session-machine.js';
import { resolveQueueSettings, type QueueSettingsInput } from '../policies/index.js';

/** What session handles share with their runtime: the run services, and the session side of the runtime. */
export interface RuntimeInternals {
  /** The one bag of services runs (and plan runs, undo, decisions) use. */
  readonly services: RunServices;
  readonly bus: EventBus;
  readonly registry: SessionRegistry;
  readonly withSession: SessionGate;
  readonly admission: AdmissionDeps;
  /** Resolves once startup recovery is done (crashed runs closed). */
  readonly ready: Promise<void>;
  /** Resolves when the runtime has closed (ends event streams). */
  readonly closed: Promise<void>;
  isClosed(): boolean;
  /** Whether an auth profile with this id is configured. */
  knowsProfile(profileId: string): boolean;
  /** Emit an event of the runtime's own (not a run's) on a live session. */
  emit(session: LiveSession, event: EventInput): void;
  readonly sessionTools: SessionTools;
  /** The plan runs and undos in progress (`abort()` and `close()` reach them). */
  readonly work: RunWork;
  /** What becomes of runs a crash or a dead worker left open. @default resume (`defaultRecoveryPolicy`) */
  readonly recovery?: RecoveryPolicy;
}

/** Throw `runtime_closed` once the runtime stopped taking work. */
export function assertOpen(internals: RuntimeInternals): void {
  if (internals.isClosed()) throw new RuntimeError('runtime_closed', 'the runtime is closed');
}

/**
 * Runs work against a session's live actor in call order, through the session's door (session-door.ts): a live
 * session with nothing in progress runs it at once (synchronously); otherwise calls wait in order behind startup
 * recovery and the session's hydration, or behind an admission that has not applied yet (`holds`), so a message can
 * never overtake one sent before it.
 */
export type SessionGate = SessionRegistry['enter'];

/** The `SessionControl` of a live session: its events on the bus, the plan and pause events to its actor. */
export function sessionControlOf(internals: RuntimeInternals, session: LiveSession): SessionControl {
  const context = () => session.actor.getSnapshot().context;
  return {
    key: session.key,
    emit: (event) => internals.emit(session, event),
    delivered: () => internals.bus.deliveredThrough(internals.bus.cursor),
    pausedRun() {
      const { run, pause } = context();
      if (run !== null && pause !== null) return { runId: run.runId, state: pause.state };
      const plan = pausedPlanOf(context());
      return plan === undefined ? undefined : { runId: plan.runId, state: 'awaiting_approval' };
    },
    pausedPlan: () => pausedPlanOf(context()),
    holdPlan: (runId) => session.actor.send({ type: 'PLAN.HELD', runId }),
    pausePlan: (runId, steps, at, written) =>
      session.actor.send({ type: 'PLAN.PAUSED', runId, steps, at, written }),
    run: (kind, runId, body) => runInSession(internals, session, { kind, runId, body }),
    persist: () => internals.registry.persist(session),
    releasePlan: (runId, ended) => {
      if (ended !== undefined) planEndWritten(ended.summary, ended.written);
      session.actor.send({
        type: 'PLAN.ENDED',
        runId,
        ...(ended === undefined ? {} : { summary: ended.summary }),
      });
    },
    answerCall: (call, answer) =>
      decideInto(session.actor, { type: 'DECIDE', toolCallId: call.toolCallId, answer }),
  };
}

/**
 * Hand a plan run or an undo to the session machine (START): it runs `body` when it starts it (`RunJobs`), and
 * the promise settles as `body` does. A session whose actor stopped runs nothing (`runtime_closed`).
 */
function runInSession<T>(
  internals: RuntimeInternals,
  session: LiveSession,
  work: { kind: 'plan' | 'undo'; runId: string; body: (signal: AbortSignal) => Promise<T> },
): Promise<T> {
  const { clock } = internals.services;
  const { kind, runId, body } = work;
  return new Promise<T>((resolve, reject) => {
    if (session.actor.getSnapshot().status !== 'active') {
      reject(new RuntimeError('runtime_closed', `${kind}: the session is stopped`));
      return;
    }
    const job = internals.work.jobs.add({
      sessionKey: session.key,
      runId,
      run: async (request) => {
        const startedAt = clock.now();
        try {
          resolve(await body(request.signal));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
        return workEnded(runId, startedAt, clock.now());
      },
      fail: reject,
    });
    session.actor.send({ type: 'START', kind, runId, job, at: clock.now() });
  });
}

/**
 * End plan run `runId` of a session, as an abort or an interrupting message asks: a plan executing now is aborted,
 * a paused one closed (its waiting steps cancelled; a paused plan the machine is closing finds them in its
 * events). The session lets the plan go once it is recorded, whatever happened.
 */
export async function endPlanOf(internals: RuntimeInternals, ended: PlanEnding): Promise<void> {
  const { sessionKey, runId, status } = ended;
  const live = internals.registry.live(sessionKey);
  const control = live === undefined ? undefined : sessionControlOf(internals, live);
  const run = live?.actor.getSnapshot().context.run;
  if (live === undefined || run?.kind !== 'plan' || run.runId !== runId || run.resume?.abort === undefined) {
    return endHeldPlan(internals.services, internals.work, control, ended);
  }
  const scope = sessionScopeOf(internals, live);
  try {
    const steps = await stepsFromEvents(internals.services.ledger, sessionKey, runId);
    await endPausedPlan(scope, { runId, steps }, status);
  } finally {
    // The machine waits for the plan's end to move on (an end recorded already released it; this is a no-op then).
    scope.control.releasePlan(runId);
  }
}

/** What a plan run, an undo or a decision of this live session works with. */
export function sessionScopeOf(internals: RuntimeInternals, session: LiveSession): SessionScope {
  return {
    services: internals.services,
    work: internals.work,
    control: sessionControlOf(internals, session),
  };
}

/** The session side of a runtime: the registry of live sessions and the sweeper that hibernates idle ones. */
export interface OpenedSessions {
  readonly registry: SessionRegistry;
  readonly sweeper: IdleSweeper;
}

/** What opening the sessions needs besides the configuration and the run services. */
export interface SessionParts {
  /** The runtime's internals, wired once the registry exists (the machine's callbacks read them later). */
  readonly internals: LateBound<RuntimeInternals>;
  readonly isClosing: () => boolean;
  readonly onCorrupt: (error: unknown) => void;
  /** Whether the model sees who said what: messages rebuilt from the inbox keep their sender line. */
  readonly attribution: boolean;
}

/** The part of the runtime's configuration the sessions read. */
export interface SessionsConfig {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly limits: { readonly pauseTimeoutMs: number };
  readonly sessions: { readonly hibernateAfterMs: number };
  readonly queue: QueueSettingsInput;
}

/** Create the idle sweeper, the session machine (executing runs with the run services) and the registry. */
export function openSessions(
  config: SessionsConfig,
  services: RunServices,
  parts: SessionParts,
): OpenedSessions {
  const { clock, limits } = config;
  const { internals } = parts;
  const sweeper = createIdleSweeper({
    clock,
    idleMs: config.sessions.hibernateAfterMs,
    onDue: (sessionKey) => {
      // A plan run keeps its session live: its events go to this session's numbering.
      if (parts.isClosing() || internals.get().work.plans.has(sessionKey)) return;
      internals.get().registry.hibernate(sessionKey).catch(services.onError);
    },
  });
  const machine = createSessionMachine({
    clock,
    ids: config.ids,
    executeRun: createRunExecutor(services, (request) =>
      request.run.job === undefined
        ? undefined
        : internals.get().work.jobs.take(request.run.job, request.sessionKey, request.run.runId),
    ),
    portOf: (sessionKey) => services.sessionPort(sessionKey),
    onIdle: (sessionKey) => sweeper.markIdle(sessionKey),
    pauseTimeoutMs: limits.pauseTimeoutMs,
    endPlan: (sessionKey, runId, status, reason) => {
      endPlanOf(internals.get(), { sessionKey, runId, status, reason }).catch(services.onError);
    },
  });
  const queueDefaults = resolveQueueSettings({ runtime: config.queue });
  const registry = createSessionRegistry({
    machine,
    ledger: services.ledger,
    clock,
    defaults: {
      debounceMs: queueDefaults.debounceMs,
      maxWaitMs: queueDefaults.maxWaitMs,
      pauseTimeoutMs: limits.pauseTimeoutMs,
      attribution: parts.attribution,
    },
    onCorrupt: parts.onCorrupt,
    onIdle: (sessionKey) => sweeper.markIdle(sessionKey),
    onError: services.onError,
  });
  return { registry, sweeper };
}
