import type { ErrorCode } from '../core/index.js';
import { backoffDelay } from './backoff.js';

/** Whether a failed tool attempt is worth another: `transient` may clear on its own, `permanent` never will. */
export type ToolFailureKind = 'transient' | 'permanent';

/**
 * Every error code, classified for tool retries (one table: model tool calls, plan steps and undo all use it).
 * Transient: the tool threw, timed out, or something it depends on is busy or down. Permanent: the call itself is
 * wrong, the caller stopped it, or retrying cannot change the answer.
 */
export const toolFailureKinds: Readonly<Record<ErrorCode, ToolFailureKind>> = {
  invalid_input: 'permanent',
  runtime_closed: 'permanent',
  queue_full: 'transient',
  rejected_busy: 'transient',
  cancelled: 'permanent',
  timeout: 'transient',
  tool_denied: 'permanent',
  tool_failed: 'transient',
  args_invalid: 'permanent',
  args_unresolved: 'permanent',
  provider_auth: 'permanent',
  provider_rate_limit: 'transient',
  provider_unavailable: 'transient',
  provider_billing: 'permanent',
  context_overflow: 'permanent',
  turn_limit: 'permanent',
  plan_cycle: 'permanent',
  ledger_locked: 'transient',
  ledger_corrupt: 'permanent',
  ledger_version: 'permanent',
  ledger_unavailable: 'transient',
  ledger_foreign: 'permanent',
  fenced: 'permanent',
  not_found: 'permanent',
  forbidden: 'permanent',
  unsupported_content: 'permanent',
  internal: 'permanent',
};

/** True when a tool attempt that failed with `code` may be tried again. */
export function isTransientToolFailure(code: ErrorCode): boolean {
  return toolFailureKinds[code] === 'transient';
}

/** How a tool call is retried: `attempts` more tries after the first, backing off from `baseMs`. */
export interface ToolRetrySettings {
  readonly attempts: number;
  readonly baseMs: number;
}

/** No retry at all: what a call gets when neither the tool nor its caller sets one. */
export const noToolRetry: ToolRetrySettings = { attempts: 0, baseMs: 0 };

/** The one retry rule: the tool's own `retry` when it defines one, else the caller's default, else none. */
export function toolRetryFor(
  toolRetry: ToolRetrySettings | undefined,
  callerDefault: ToolRetrySettings | undefined,
): ToolRetrySettings {
  return toolRetry ?? callerDefault ?? noToolRetry;
}

/**
 * Whether the attempt numbered `attempt` (0 for the first) that failed with `code` gets another, and after how
 * long: full-jitter exponential backoff from `baseMs` (×2 per retry, capped at 30 s). `undefined`: give up.
 */
export function nextToolRetryDelay(
  attempt: number,
  code: ErrorCode,
  retry: ToolRetrySettings,
  random: () => number,
): number | undefined {
  if (attempt >= retry.attempts || !isTransientToolFailure(code)) return undefined;
  return backoffDelay(attempt, random, { baseMs: retry.baseMs });
}
