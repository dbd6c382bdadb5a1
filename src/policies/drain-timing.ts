/** When the drain of a session's queue is due. */
export interface DrainTimingInput {
  /** When the most recent message was enqueued (ms). */
  readonly lastEnqueuedAt: number;
  /** When the run that kept the session busy ended (ms). */
  readonly runEndedAt: number;
  /** Quiet time required after the last enqueued message. */
  readonly debounceMs: number;
  /** Longest wait after the run ended. */
  readonly maxWaitMs: number;
}

/**
 * The time the queue drains: quiet for `debounceMs` after the last message, but never later than
 * `maxWaitMs` after the run ended, and never before the run ended.
 */
export function drainDueAt(input: DrainTimingInput): number {
  const quietAt = input.lastEnqueuedAt + input.debounceMs;
  const deadline = input.runEndedAt + input.maxWaitMs;
  return Math.max(input.runEndedAt, Math.min(quietAt, deadline));
}
