import type { RunSummary } from '../runner/run-summary.js';
import type { PlanHold } from '../actors/session-context.js';
import { pausedPlanOf } from '../actors/session-plans.js';
import type { LiveSession } from '../actors/session-registry.js';
import type { ErrorInfo } from '../core/errors.js';
import type { RunRecord, StepResultRecord } from '../ledger/index.js';
import { runAbortReason, type AbortStatus } from '../runner/run-abort.js';
import type { RuntimeInternals } from './runtime-internals.js';

const usage = { inputTokens: 0, outputTokens: 0 };

/**
 * End a plan run the session holds, as an abort or an interrupting message asks: a plan executing now is
 * aborted (it records its own end), a paused one is closed here. Settles once the end is recorded.
 */
export function endHeldPlan(
  internals: RuntimeInternals,
  sessionKey: string,
  runId: string,
  status: AbortStatus,
  reason: string,
): Promise<void> {
  const active = internals.activePlans.get(sessionKey)?.get(runId);
  if (active !== undefined) {
    if (!active.controller.signal.aborted) active.controller.abort(runAbortReason(status, reason));
    return active.finished;
  }
  const live = internals.registry.live(sessionKey);
  const hold = live === undefined ? undefined : pausedPlanOf(live.actor.getSnapshot().context);
  if (live === undefined || hold?.runId !== runId) return Promise.resolve();
  return endPausedPlan(internals, live, hold, status);
}

/**
 * Close a paused plan run without resuming it: the steps it waits for are recorded `cancelled` (their approvals
 * resolved `cancelled`), the run ends with `status`, and the session lets the plan go (its queue drains) before
 * `run.ended` is out. `approvePlan` is refused meanwhile; a plan that is no longer paused is left alone.
 */
async function endPausedPlan(
  internals: RuntimeInternals,
  session: LiveSession,
  hold: PlanHold,
  status: AbortStatus,
): Promise<void> {
  const { ledger } = internals.services;
  const { runId } = hold;
  if (internals.resumingPlans.has(runId)) return;
  internals.resumingPlans.add(runId);
  try {
    const [run, previous] = await Promise.all([ledger.getRun(runId), ledger.listStepResults(runId)]);
    if (run?.status !== 'awaiting_approval') {
      // Nothing left to close (ended meanwhile, or the row is gone): only let the session go.
      session.actor.send({ type: 'PLAN.ENDED', runId });
      return;
    }
    await Promise.all(closePaused(internals, session, { hold, run, previous, status }));
  } finally {
    internals.resumingPlans.delete(runId);
  }
}

/** The synchronous stretch that closes a paused plan: step results, the run's end, the session, the events. */
function closePaused(
  internals: RuntimeInternals,
  session: LiveSession,
  paused: { hold: PlanHold; run: RunRecord; previous: readonly StepResultRecord[]; status: AbortStatus },
): Promise<void>[] {
  const { ledger, clock } = internals.services;
  const { hold, run, previous, status } = paused;
  const { runId } = hold;
  const now = clock.now();
  const done = new Set(previous.map((result) => result.stepId));
  const waiting = hold.steps.filter((step) => !done.has(step.stepId));
  const cancelled: ErrorInfo = { code: 'cancelled', message: `the plan was ${status} while it waited` };
  const writes = waiting.map((step, index) =>
    ledger.putStepResult({
      runId,
      stepId: step.stepId,
      seq: previous.length + index + 1,
      success: false,
      error: cancelled,
      metadata: { executionTime: 0, retries: 0, startedAt: now },
      recordedAt: now,
    }),
  );
  const succeeded = previous.filter((result) => result.success).length;
  const text = `plan: ${succeeded} of ${previous.length + waiting.length} steps succeeded`;
  const error: ErrorInfo = { code: 'cancelled', message: `the plan was ${status}` };
  writes.push(ledger.closeRun(runId, { status, endedAt: now, text, usage, cost: 0, error }));
  const summary: RunSummary = {
    runId,
    status,
    text,
    messageIds: [],
    startedAt: run.startedAt,
    endedAt: now,
    error,
  };
  session.actor.send({ type: 'PLAN.ENDED', runId, summary });
  for (const step of waiting) {
    internals.emit(session, {
      type: 'approval.resolved',
      runId,
      toolCallId: step.stepId,
      tool: step.tool,
      decision: 'cancelled',
    });
  }
  const durationMs = now - run.startedAt;
  internals.emit(session, { type: 'run.ended', runId, status, text, usage, durationMs, error });
  return writes;
}
