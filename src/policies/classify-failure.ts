import { assertNever } from '../core/index.js';
import type { ErrorCode } from '../core/index.js';
import type { FailureReason } from '../core/index.js';

export { failureReasons, type FailureReason } from '../core/index.js';

/** What is known about a failed provider attempt: HTTP status, transport error code, message, user abort. */
export interface ProviderFailure {
  readonly status?: number | undefined;
  readonly code?: string | undefined;
  readonly message: string;
  readonly aborted?: boolean | undefined;
}

// Transport error codes that mean "the provider did not answer in time or dropped us".
const timeoutCodes: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

// Wording providers use for a key that will never work again (OpenAI, Anthropic, Gemini).
const invalidKeyPhrases = [
  'invalid api key',
  'invalid x-api-key',
  'invalid_api_key',
  'incorrect api key',
  'api key not valid',
  'revoked',
];

// Checked in this order; the first match wins.
const textRules: readonly (readonly [FailureReason, (text: string) => boolean])[] = [
  ['rate_limit', includesAny('rate limit', 'too many requests', 'quota exceeded', 'resource_exhausted')],
  ['overloaded', includesAny('overloaded')],
  ['billing', includesAny('insufficient credits', 'credit balance')],
  ['context_overflow', includesAny('context length', 'prompt is too long', 'maximum context')],
  ['model_not_found', (text) => text.includes('model not found') || isMissingModel(text)],
  [
    'thinking_unsupported',
    (text) => text.includes('supported values are') && /thinking|reasoning/.test(text),
  ],
];

function includesAny(...phrases: string[]): (text: string) => boolean {
  return (text) => phrases.some((phrase) => text.includes(phrase));
}

function isMissingModel(text: string): boolean {
  return text.includes('does not exist') && text.includes('model');
}

function classifyText(text: string): FailureReason | undefined {
  return textRules.find(([, matches]) => matches(text))?.[0];
}

function classifyStatus(status: number, text: string): FailureReason | undefined {
  const invalidKey = invalidKeyPhrases.some((phrase) => text.includes(phrase));
  if (status === 402) return 'billing';
  if (status === 429) return 'rate_limit';
  if (status === 408) return 'timeout';
  // 400 is the catch-all "bad request": specific wording (a dead key, context, model, billing…) wins.
  if (status === 400) return invalidKey ? 'auth_permanent' : (classifyText(text) ?? 'format');
  if (status === 401 || status === 403) return invalidKey ? 'auth_permanent' : 'auth';
  if (status === 529) return 'overloaded';
  if (status >= 500 && status <= 599) return 'timeout';
  return undefined;
}

/**
 * Why a provider attempt failed: a user abort first, then the HTTP status, then the transport error code,
 * then the message text (case-insensitive); `unknown` when nothing matches.
 */
export function classifyFailure(failure: ProviderFailure): FailureReason {
  if (failure.aborted === true) return 'aborted';
  const text = failure.message.toLowerCase();
  const byStatus = failure.status === undefined ? undefined : classifyStatus(failure.status, text);
  if (byStatus !== undefined) return byStatus;
  if (failure.code !== undefined && timeoutCodes.has(failure.code.toUpperCase())) return 'timeout';
  return classifyText(text) ?? 'unknown';
}

/** The `RuntimeError` code a run surfaces when its last attempt failed for `reason`. */
export function errorCodeFor(reason: FailureReason): ErrorCode {
  switch (reason) {
    case 'billing':
      return 'provider_billing';
    case 'rate_limit':
    case 'overloaded':
      return 'provider_rate_limit';
    case 'auth':
    case 'auth_permanent':
      return 'provider_auth';
    case 'timeout':
    case 'unknown':
      return 'provider_unavailable';
    case 'context_overflow':
      return 'context_overflow';
    case 'model_not_found':
    case 'format':
    case 'thinking_unsupported':
      return 'invalid_input';
    case 'aborted':
      return 'cancelled';
    default:
      return assertNever(reason, 'failure reason');
  }
}

const rotating: ReadonlySet<FailureReason> = new Set([
  'auth',
  'auth_permanent',
  'rate_limit',
  'overloaded',
  'billing',
  'timeout',
]);
const cooling: ReadonlySet<FailureReason> = new Set(['rate_limit', 'overloaded', 'timeout', 'auth']);
const disabling: ReadonlySet<FailureReason> = new Set(['billing', 'auth_permanent']);

/** True when the failure is the profile's fault, so the next attempt moves to another profile. */
export function rotatesProfile(reason: FailureReason): boolean {
  return rotating.has(reason);
}

/** True when the failure puts the profile on the short cooldown ladder (30 s, 60 s, 5 min). */
export function coolsProfile(reason: FailureReason): boolean {
  return cooling.has(reason);
}

/** True when the failure disables the profile on the long ladder (5 h doubling to 24 h): billing, dead key. */
export function disablesProfile(reason: FailureReason): boolean {
  return disabling.has(reason);
}
