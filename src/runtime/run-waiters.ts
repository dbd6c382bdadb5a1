import type { LiveSession } from '../actors/session-registry.js';
import { isRunPaused, type RunResult } from '../runner/run-summary.js';
import type { EventBus } from './event-bus.js';

/**
 * The machine adopted a run's pause or end: the events announcing it go out now, and the waiters of this moment
 * are answered a macrotask later, so a subscriber has seen those events when waitForEnd() answers.
 */
export function notifyRunWaiters(
  bus: EventBus,
  liveOf: (sessionKey: string) => LiveSession | undefined,
  sessionKey: string,
  result: RunResult,
): void {
  bus.adopted(sessionKey);
  const live = liveOf(sessionKey);
  if (live === undefined) return;
  live.unobservedEnd = isRunPaused(result) || live.waiters !== undefined ? undefined : result;
  answerWaiters(live, result);
}

/** Answer the session's `waitForEnd()` callers of this moment, a macrotask later (a plan's pause or end too). */
export function answerWaiters(live: LiveSession, result: RunResult): void {
  const waiters = live.waiters;
  live.waiters = undefined;
  if (waiters === undefined) return;
  setImmediate(() => {
    for (const waiter of waiters) waiter(result);
  });
}
