import type { LiveSession, SessionRegistry } from './session-registry.js';
import { RuntimeError, type EventInput } from '../core/index.js';
import type { RunServices, RunWork, RecoveryPolicy, SessionScope, SessionControl } from '../runner/index.js';
import type { SessionTools } from './session-tools.js';
import type { AdmissionDeps } from './admit-message.js';
import type { EventBus } from '../events/index.js';
import { pausedPlanOf } from './session-pause.js';

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
    pausedRun() {
      const { run, pause } = context();
      if (run !== null && pause !== null) return { runId: run.runId, state: pause.state };
      const plan = pausedPlanOf(context());
      return plan === undefined ? undefined : { runId: plan.runId, state: 'awaiting_approval' };
    },
    pausedPlan: () => pausedPlanOf(context()),
    holdPlan: (runId) => session.actor.send({ type: 'PLAN.HELD', runId }),
    pausePlan: (runId, steps, at) => session.actor.send({ type: 'PLAN.PAUSED', runId, steps, at }),
    persist: () => internals.registry.persist(session),
    releasePlan: (runId, summary) =>
      session.actor.send({ type: 'PLAN.ENDED', runId, ...(summary === undefined ? {} : { summary }) }),
    settleCall(turn, position) {
      session.actor.send({ type: 'PAUSE.SETTLED', turn, position });
      const after = context();
      return {
        ...(after.run === null ? {} : { runId: after.run.runId }),
        ...(after.pause === null ? {} : { state: after.pause.state }),
      };
    },
  };
}

/** What a plan run, an undo or a decision of this live session works with. */
export function sessionScopeOf(internals: RuntimeInternals, session: LiveSession): SessionScope {
  return {
    services: internals.services,
    work: internals.work,
    control: sessionControlOf(internals, session),
  };
}
