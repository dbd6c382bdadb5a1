/** Every reason a provider attempt can fail for; it decides rotation, cooldown and the surfaced error code. */
export const failureReasons = [
  'billing',
  'rate_limit',
  'timeout',
  'format',
  'auth',
  'auth_permanent',
  'overloaded',
  'context_overflow',
  'model_not_found',
  'thinking_unsupported',
  'aborted',
  'unknown',
] as const;

/** One reason from the closed union of failure reasons. */
export type FailureReason = (typeof failureReasons)[number];
