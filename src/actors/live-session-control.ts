import { pausedPlanOf } from './session-pause.js';
import type { LiveSession } from './session-registry.js';
import type { SessionScope, SessionControl } from '../runner/index.js';
import type { RuntimeInternals } from './runtime-internals.js';

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
