import type { ErrorInfo } from '../core/index.js';
import type { RunRecord, StepResultRecord } from '../ledger/index.js';
import { runFailureCode } from '../policies/index.js';
import type { PlanOutcome, StepResult } from '../plans/index.js';
import { runAbortReason, type AbortStatus } from './execute-run.js';
import type { PlanSegment } from './plan-run.js';
import type { SessionScope } from './session-scope.js';
import type { RunServices } from './run-services.js';
import type { RunSummary } from './run-request.js';
import type { RunWork } from './run-work.js';
import type { PausedPlan, SessionControl } from './session-control.js';

const usage = { inputTokens: 0, outputTokens: 0 };

/** How a plan that stopped without waiting failed: the code highest on the error ladder among its steps. */
function planError(results: readonly StepResult[]): ErrorInfo | undefined {
  const failed = results.filter((result) => !result.success && result.error !== undefined);
  const code = runFailureCode(failed.map((result) => result.error?.code ?? 'internal'));
  const first = failed.find((result) => result.error?.code === code);
  if (code === undefined || first === undefined) return undefined;
  return { code, message: `step "${first.stepId}" failed: ${first.error?.message ?? ''}` };
}

/** Close a plan run that stopped for good, with a one-line summary as its text. */
export function endPlanRun(
  scope: SessionScope,
  segment: PlanSegment,
  outcome: PlanOutcome & { readonly aborted: AbortStatus },
): Promise<void> {
  const { services, control } = scope;
  const { runId } = segment;
  // An aborted plan ends as its abort says: interrupted by a message, aborted by the caller.
  const status =
    outcome.status === 'awaiting_approval'
      ? 'failed'
      : outcome.status === 'aborted'
        ? outcome.aborted
        : outcome.status;
  const endedAt = services.clock.now();
  const succeeded = outcome.results.filter((result) => result.success).length;
  const text = `plan: ${succeeded} of ${outcome.results.length} steps succeeded`;
  const failure =
    outcome.status === 'aborted'
      ? { code: 'cancelled' as const, message: `the plan was ${status}` }
      : outcome.status === 'failed'
        ? planError(outcome.results)
        : undefined;
  const error = failure === undefined ? {} : { error: failure };
  const closed = services.ledger.closeRun(runId, { status, endedAt, text, usage, cost: 0, ...error });
  const summary: RunSummary = {
    runId,
    status,
    text,
    messageIds: [],
    startedAt: segment.startedAt,
    endedAt,
    ...error,
  };
  // The session lets the plan go (queued messages drain) before run.ended is out.
  control.releasePlan(runId, summary);
  const durationMs = endedAt - segment.startedAt;
  control.emit({ type: 'run.ended', runId, status, text, usage, durationMs, ...error });
  return closed;
}

/** A plan run of a session to end, and how: `aborted` or `interrupted`, and why. */
export interface PlanEnding {
  readonly sessionKey: string;
  readonly runId: string;
  readonly status: AbortStatus;
  readonly reason: string;
}

/**
 * End a plan run the session holds, as an abort or an interrupting message asks: a plan executing now is
 * aborted (it records its own end), a paused one is closed here. Settles once the end is recorded.
 */
export function endHeldPlan(
  services: RunServices,
  work: RunWork,
  control: SessionControl | undefined,
  ended: PlanEnding,
): Promise<void> {
  const { sessionKey, runId, status, reason } = ended;
  const active = work.plans.get(sessionKey)?.get(runId);
  if (active !== undefined) {
    if (!active.controller.signal.aborted) active.controller.abort(runAbortReason(status, reason));
    return active.finished;
  }
  const hold = control?.pausedPlan();
  if (control === undefined || hold?.runId !== runId) return Promise.resolve();
  return endPausedPlan({ services, work, control }, hold, status);
}

/**
 * Close a paused plan run without resuming it: the steps it waits for are recorded `cancelled` (their approvals
 * resolved `cancelled`), the run ends with `status`, and the session lets the plan go (its queue drains) before
 * `run.ended` is out. `approvePlan` is refused meanwhile; a plan that is no longer paused is left alone.
 */
export async function endPausedPlan(
  scope: SessionScope,
  hold: PausedPlan,
  status: AbortStatus,
): Promise<void> {
  const { ledger } = scope.services;
  const { resumingPlans } = scope.work;
  const { runId } = hold;
  if (resumingPlans.has(runId)) return;
  resumingPlans.add(runId);
  try {
    const [run, previous] = await Promise.all([ledger.getRun(runId), ledger.listStepResults(runId)]);
    if (run?.status !== 'awaiting_approval') {
      // Nothing left to close (ended meanwhile, or the row is gone): only let the session go.
      scope.control.releasePlan(runId);
      return;
    }
    await Promise.all(closePaused(scope, { hold, run, previous, status }));
  } finally {
    resumingPlans.delete(runId);
  }
}

/** The synchronous stretch that closes a paused plan: step results, the run's end, the session, the events. */
function closePaused(
  scope: SessionScope,
  paused: { hold: PausedPlan; run: RunRecord; previous: readonly StepResultRecord[]; status: AbortStatus },
): Promise<void>[] {
  const { ledger, clock } = scope.services;
  const { control } = scope;
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
  const startedAt = run.startedAt;
  control.releasePlan(runId, { runId, status, text, messageIds: [], startedAt, endedAt: now, error });
  for (const step of waiting) {
    const { stepId: toolCallId, tool } = step;
    control.emit({ type: 'approval.resolved', runId, toolCallId, tool, decision: 'cancelled' });
  }
  control.emit({ type: 'run.ended', runId, status, text, usage, durationMs: now - startedAt, error });
  return writes;
}
