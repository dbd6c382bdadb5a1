import type { AbortStatus } from '../runner/index.js';
import type { RunPaused, RunResult } from '../runner/index.js';
import type { PlanHold, PlanStepWait, SessionContext, SessionEvent } from './session-context.js';

/** The session's plan runs not ended yet (none in a snapshot from before plans were held). */
export function heldPlans(context: SessionContext): readonly PlanHold[] {
  return context.plans ?? [];
}

/** The plan run of the session that waits for approval, if any. */
export function pausedPlanOf(context: SessionContext): PlanHold | undefined {
  return heldPlans(context).find((plan) => plan.state === 'awaiting_approval');
}

/** A plan run was submitted or resumed: it holds the session (running) until it pauses or ends. */
export function holdPlan(context: SessionContext, runId: string): SessionContext {
  const others = heldPlans(context).filter((plan) => plan.runId !== runId);
  const known = heldPlans(context).some((plan) => plan.runId === runId);
  const running: PlanHold = { runId, state: 'running', steps: [] };
  const plans = known
    ? heldPlans(context).map((plan) => (plan.runId === runId ? running : plan))
    : [...others, running];
  return { ...context, plans };
}

/** A plan run paused for approval of `steps`: it keeps holding the session. */
export function pausePlan(
  context: SessionContext,
  runId: string,
  steps: readonly PlanStepWait[],
): SessionContext {
  const paused: PlanHold = { runId, state: 'awaiting_approval', steps };
  const known = heldPlans(context).some((plan) => plan.runId === runId);
  const plans = known
    ? heldPlans(context).map((plan) => (plan.runId === runId ? paused : plan))
    : [...heldPlans(context), paused];
  return { ...context, plans };
}

/** A plan run ended (or never ran): it no longer holds the session. */
export function releasePlan(context: SessionContext, runId: string): SessionContext {
  const plans = heldPlans(context).filter((plan) => plan.runId !== runId);
  return plans.length === heldPlans(context).length ? context : { ...context, plans };
}

/** A paused plan as `waitForEnd()` waiters are told: its steps are the calls it waits for. */
export function planPaused(runId: string, steps: readonly PlanStepWait[], at: number): RunPaused {
  return {
    runId,
    state: 'awaiting_approval',
    calls: steps.map((step, position) => ({
      toolCallId: step.stepId,
      tool: step.tool,
      needs: 'approval',
      turn: 0,
      position,
    })),
    at,
  };
}

/** The context after a PLAN.* event (any other event changes nothing). */
export function applyPlanEvent(context: SessionContext, event: SessionEvent): SessionContext {
  if (event.type === 'PLAN.HELD') return holdPlan(context, event.runId);
  if (event.type === 'PLAN.PAUSED') return pausePlan(context, event.runId, event.steps);
  return event.type === 'PLAN.ENDED' ? releasePlan(context, event.runId) : context;
}

/** What `waitForEnd()` callers are answered when a plan run pauses or ends. */
export function planStoppedResult(event: SessionEvent): RunResult | undefined {
  if (event.type === 'PLAN.PAUSED') return planPaused(event.runId, event.steps, event.at);
  return event.type === 'PLAN.ENDED' ? event.summary : undefined;
}

/**
 * How an abort or an interrupting message ends the plan runs the session holds (`endPlans` runs on an ADMIT only
 * when the message interrupts).
 */
export function planEnding(event: SessionEvent): { status: AbortStatus; reason: string } | undefined {
  if (event.type === 'ABORT') return { status: event.status, reason: event.reason };
  if (event.type === 'ADMIT') return { status: 'interrupted', reason: 'interrupted by a new message' };
  return undefined;
}
