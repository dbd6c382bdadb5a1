import type { LiveSession } from './session-registry.js';
import { pausedPlanOf } from './session-pause.js';
import { isRunPaused, type PausedCallInfo, type RunResult, type RunSummary } from '../runner/index.js';
import { maxDurationMs, RuntimeError, type PauseState } from '../core/index.js';
import { isRunActive } from '../policies/index.js';
import type { RuntimeInternals } from './runtime-internals.js';
import { activityOf } from './session-machine.js';

/** A paused run, as `waitForEnd()` reports it: why it paused and the calls it waits for. */
export interface PausedRunInfo {
  readonly runId: string;
  readonly state: PauseState;
  readonly waiting: readonly {
    readonly toolCallId: string;
    readonly tool: string;
    readonly needs: 'approval' | 'deferred';
    /** Started before a crash with no recorded outcome: `approve` runs it again, `reject`, or supply its outcome. */
    readonly inDoubt?: boolean;
  }[];
}

/**
 * What `waitForEnd()` resolves with. `paused`: the run waits for `approve` or `supplyToolResult` (it has not
 * ended; waiting longer would only wait for the operator).
 */
export type WaitResult =
  | { readonly status: 'idle' }
  | { readonly status: 'ended'; readonly run: RunSummary }
  | ({ readonly status: 'paused' } & PausedRunInfo)
  | { readonly status: 'timeout' };

/** The `waitForEnd` timeout: `invalid_input` when it is not a number of milliseconds; at least 100. */
export function parseTimeout(options: { timeoutMs?: number } | undefined): number {
  const timeoutMs = options?.timeoutMs ?? 15_000;
  if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0 && timeoutMs <= maxDurationMs)) {
    throw new RuntimeError(
      'invalid_input',
      `waitForEnd: timeoutMs must be a number of milliseconds from 0 to ${maxDurationMs} (a year)`,
    );
  }
  return Math.max(100, timeoutMs);
}

/** What a paused run waits for; calls of the session's pause that were settled already are left out. */
function pausedInfo(
  runId: string,
  state: PauseState,
  calls: readonly (PausedCallInfo & { readonly settled?: boolean })[],
): PausedRunInfo {
  const waiting = calls
    .filter((call) => call.settled !== true)
    .map(({ toolCallId, tool, needs, inDoubt }) => ({
      toolCallId,
      tool,
      needs,
      ...(inDoubt === true ? { inDoubt } : {}),
    }));
  return { runId, state, waiting };
}

/** What `waitForEnd()` answers for a run's pause or end. */
function answerOf(result: RunResult): WaitResult {
  return isRunPaused(result)
    ? { status: 'paused', ...pausedInfo(result.runId, result.state, result.calls) }
    : { status: 'ended', run: result };
}

/**
 * Wait for the machine's next `run.settled` (a run's or a plan run's pause or end). The end is observed at once
 * (the next `waitForEnd()` does not answer it again); the answer comes once the events emitted up to then (those
 * announcing it among them) were delivered to the subscribers.
 */
function waitOn(internals: RuntimeInternals, session: LiveSession, timeoutMs: number): Promise<WaitResult> {
  const { clock } = internals.services;
  return new Promise<WaitResult>((resolve) => {
    const subscription = session.actor.on('run.settled', ({ result }) => {
      subscription.unsubscribe();
      clock.clearTimeout(timer);
      session.actor.send({ type: 'END.OBSERVED', runId: result.runId });
      // The events announcing it go out once the run's report reached the machine (after this, in the same step):
      // answer once they were delivered, so a subscriber has them before the caller acts on the answer.
      void internals.bus.deliveredThrough(internals.bus.cursor).then(() => resolve(answerOf(result)));
    });
    const timer = clock.setTimeout(() => {
      subscription.unsubscribe();
      resolve({ status: 'timeout' });
    }, timeoutMs);
  });
}

/** Wait for a live session's active run, if any. */
export function waitForRun(
  internals: RuntimeInternals,
  session: LiveSession,
  timeoutMs: number,
): Promise<WaitResult> {
  const snapshot = session.actor.getSnapshot();
  const { pause, run } = snapshot.context;
  if (pause !== null && run !== null) {
    return Promise.resolve({ status: 'paused', ...pausedInfo(run.runId, pause.state, pause.calls) });
  }
  // A paused plan run holds the session like a paused run: its waiting steps are the calls it waits for.
  const plan = pausedPlanOf(snapshot.context);
  if (plan !== undefined && (run === null || run.runId === plan.runId)) {
    const waiting = plan.steps.map((step) => ({
      toolCallId: step.stepId,
      tool: step.tool,
      needs: 'approval' as const,
    }));
    return Promise.resolve({ status: 'paused', runId: plan.runId, state: 'awaiting_approval', waiting });
  }
  // An undo is a run of the session's machine, but no run `waitForEnd()` reports: it waits for none.
  if (!isRunActive(activityOf(snapshot)) || run?.kind === 'undo') {
    const ended = snapshot.context.unobservedEnd;
    if (ended !== undefined) session.actor.send({ type: 'END.OBSERVED', runId: ended.runId });
    return Promise.resolve(ended === undefined ? { status: 'idle' } : { status: 'ended', run: ended });
  }
  return waitOn(internals, session, timeoutMs);
}
