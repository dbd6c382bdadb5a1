/** Every code a `RuntimeError` can carry: one closed union, shared by the API, runs and the ledger. */
export const errorCodes = [
  'invalid_input',
  'runtime_closed',
  'queue_full',
  'rejected_busy',
  'cancelled',
  'timeout',
  'tool_denied',
  'tool_failed',
  'args_invalid',
  'args_unresolved',
  'provider_auth',
  'provider_rate_limit',
  'provider_unavailable',
  'provider_billing',
  'context_overflow',
  'turn_limit',
  'plan_cycle',
  'ledger_locked',
  'ledger_corrupt',
  'ledger_version',
  'ledger_unavailable',
  'ledger_foreign',
  // A write of a session's former owner, refused: another worker claimed the session (its epoch moved on).
  'fenced',
  'not_found',
  // A sender's role may not do what was asked (stop another's run, approve its own request: docs/semantics.md).
  'forbidden',
  'unsupported_content',
  'internal',
] as const;

/** A code from the closed union of runtime error codes. */
export type ErrorCode = (typeof errorCodes)[number];

/** The one error class that crosses the public API; `code` says what went wrong, `details` says where. */
export class RuntimeError extends Error {
  override readonly name = 'RuntimeError';
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

/** True when `error` is a RuntimeError, and, if `code` is given, carries that code. */
export function isRuntimeError(error: unknown, code?: ErrorCode): error is RuntimeError {
  return error instanceof RuntimeError && (code === undefined || error.code === code);
}

/** The code and message of an error as stored in events and the ledger. */
export interface ErrorInfo {
  readonly code: ErrorCode;
  readonly message: string;
}

/** Reduce any thrown value to `{ code, message }`; unknown errors become `internal`. */
export function toErrorInfo(error: unknown): ErrorInfo {
  if (isRuntimeError(error)) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: 'internal', message: error.message };
  return { code: 'internal', message: String(error) };
}

/** Exhaustiveness guard for `switch` over closed unions. */
export function assertNever(value: never, what = 'value'): never {
  throw new RuntimeError('internal', `unexpected ${what}: ${JSON.stringify(value)}`);
}
