import type { RunResult, RunSummary } from '../runner/index.js';
import type { SessionContext, SessionEvent } from './session-context.js';
import { planStoppedResult } from './session-plans.js';

/** The run result an event settles (a run's or a plan run's end or pause), for the `run.settled` emit. */
export function settledResult(event: SessionEvent): RunResult | undefined {
  if (event.type === 'RUN.DONE') return event.summary;
  if (event.type === 'RUN.PAUSED') return event.paused;
  return planStoppedResult(event);
}

/** The context with `unobservedEnd` set to the run that just ended (a waiter that sees it clears it). */
export function withUnobservedEnd(context: SessionContext, summary: RunSummary): SessionContext {
  return { ...context, unobservedEnd: summary };
}

/**
 * The context without an unobserved end: a pause, or a `waitForEnd()` that answered (or saw) `runId`'s end. The
 * field is set to undefined, not left out: XState's `assign` merges what it is given into the context.
 */
export function withoutUnobservedEnd(context: SessionContext, runId?: string): SessionContext {
  if (context.unobservedEnd === undefined) return context;
  if (runId !== undefined && context.unobservedEnd.runId !== runId) return context;
  return { ...context, unobservedEnd: undefined };
}
