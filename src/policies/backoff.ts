/** Options of the exponential backoff. */
export interface BackoffOptions {
  /** Delay ceiling of the first retry (attempt 0). @default 500 */
  readonly baseMs?: number;
  /** Growth of the ceiling per attempt. @default 2 */
  readonly factor?: number;
  /** Largest ceiling. @default 30_000 */
  readonly capMs?: number;
}

/** Exponential backoff with full jitter: `floor(random() * min(capMs, baseMs * factor ** attempt))`. */
export function backoffDelay(attempt: number, random: () => number, options: BackoffOptions = {}): number {
  const { baseMs = 500, factor = 2, capMs = 30_000 } = options;
  const ceiling = Math.min(capMs, baseMs * factor ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}

/** Honour a provider's Retry-After (capped at `maxRetryAfterMs`) when it is longer than the computed delay. */
export function retryAfterDelay(
  retryAfterMs: number | undefined,
  computed: number,
  maxRetryAfterMs = 60_000,
): number {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs)) return computed;
  return Math.max(computed, Math.min(retryAfterMs, maxRetryAfterMs));
}
