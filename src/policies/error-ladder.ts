import { assertNever } from '../core/index.js';
import type { ErrorCode } from '../core/index.js';

/** Failure classes of a run, highest precedence first. */
export const failurePrecedence = [
  'cancelled',
  'tool_denied',
  'tool_failed',
  'provider',
  'validation',
  'turn_limit',
  'internal',
] as const;

/** A rung of the error ladder. */
export type FailureClass = (typeof failurePrecedence)[number];

/**
 * The rung an error code sits on; `unclassified` codes (timeout, queue_full, ledger_*, ...) rank just
 * above `internal`: they are known, named failures, so they say more than a bare `internal`, but
 * they say less about the run than anything on the ladder.
 */
export function failureClassOf(code: ErrorCode): FailureClass | 'unclassified' {
  switch (code) {
    case 'cancelled':
    case 'tool_denied':
    case 'tool_failed':
    case 'turn_limit':
    case 'internal':
      return code;
    case 'provider_auth':
    case 'provider_rate_limit':
    case 'provider_unavailable':
    case 'provider_billing':
    case 'context_overflow':
      return 'provider';
    case 'invalid_input':
    case 'unsupported_content':
    case 'args_invalid':
    case 'args_unresolved':
      return 'validation';
    case 'runtime_closed':
    case 'queue_full':
    case 'rejected_busy':
    case 'timeout':
    case 'plan_cycle':
    case 'ledger_locked':
    case 'ledger_corrupt':
    case 'ledger_version':
    case 'ledger_unavailable':
    case 'ledger_foreign':
    case 'fenced':
    case 'not_found':
    case 'forbidden':
      return 'unclassified';
    default:
      return assertNever(code, 'error code');
  }
}

/** Lower is more important; `unclassified` sits between `turn_limit` and `internal`. */
function rankOf(code: ErrorCode): number {
  const failureClass = failureClassOf(code);
  if (failureClass === 'unclassified') return failurePrecedence.indexOf('internal') - 0.5;
  return failurePrecedence.indexOf(failureClass);
}

/**
 * The one code a failed run reports: the highest on the ladder among `codes`, the earliest on a tie
 * (two provider codes, say), `undefined` when there are none.
 */
export function runFailureCode(codes: readonly ErrorCode[]): ErrorCode | undefined {
  let best: ErrorCode | undefined;
  for (const code of codes) if (best === undefined || rankOf(code) < rankOf(best)) best = code;
  return best;
}
