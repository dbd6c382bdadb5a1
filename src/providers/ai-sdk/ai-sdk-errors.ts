/**
 * What an AI SDK model failed with, as a `ProviderError` the failover policy classifies: `APICallError`'s status,
 * `Retry-After` headers and retryability, in-stream error objects, and the SDK's parse errors.
 */
import { ProviderError } from '../model-provider.js';
import { causeMessages, networkCode, parseRetryAfter, scrubProviderError } from '../transport-errors.js';

/** What error mapping needs from the call: the secret to scrub and the time to measure a Retry-After date. */
export interface AiSdkErrorContext {
  readonly secret: string | undefined;
  readonly now: number;
}

/** The fields of the SDK's `APICallError` the mapping reads (checked by its marker, so any copy of the SDK works). */
interface ApiCallErrorFields {
  readonly message: string;
  readonly statusCode?: number;
  readonly responseHeaders?: Record<string, string>;
  readonly isRetryable: boolean;
  readonly data?: unknown;
  readonly cause?: unknown;
}

/** Error names of the SDK meaning the response could not be read as the vendor's format. */
const malformedNames: ReadonlySet<string> = new Set([
  'AI_JSONParseError',
  'AI_TypeValidationError',
  'AI_InvalidResponseDataError',
  'AI_EmptyResponseBodyError',
]);

/** Whether `error` carries the AI SDK's marker for `name` (how `APICallError.isInstance` checks, across copies). */
function hasMarker(error: unknown, name: string): boolean {
  const marker = Symbol.for(`vercel.ai.error.${name}`);
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

/**
 * Map anything an AI SDK model threw or streamed as an `error` part to a `ProviderError` whose message and code
 * never contain the secret. The SDK error is not kept as `cause`: its message and body may echo the key.
 */
export function toProviderError(error: unknown, context: AiSdkErrorContext): ProviderError {
  if (error instanceof ProviderError) return scrubProviderError(error, context.secret);
  return scrubProviderError(describe(error, context.now), context.secret);
}

function describe(error: unknown, now: number): ProviderError {
  if (hasMarker(error, 'AI_APICallError')) return fromApiCallError(error as ApiCallErrorFields, now);
  const name = error instanceof Error ? error.name : undefined;
  if (name !== undefined && malformedNames.has(name)) {
    return new ProviderError(`malformed response: ${error instanceof Error ? error.message : ''}`, {
      status: 502,
      code: 'malformed_response',
    });
  }
  if (name === 'AI_LoadAPIKeyError') {
    return new ProviderError(`no API key: ${(error as Error).message}`, {
      status: 401,
      code: 'missing_api_key',
    });
  }
  if (error instanceof Error) {
    // Anything else surfaced while reading the body: undici's "terminated" when the socket closes mid-stream.
    return new ProviderError(`stream interrupted: ${causeMessages(error)}`, {
      code: networkCode(error) ?? 'ECONNRESET',
    });
  }
  return fromStreamErrorObject(error);
}

function fromApiCallError(error: ApiCallErrorFields, now: number): ProviderError {
  const status = error.statusCode;
  if (status === undefined) {
    // No response at all: the SDK's "Cannot connect to API", a refused or reset connection.
    const code = networkCode(error.cause) ?? (error.isRetryable ? 'ECONNRESET' : 'unknown_error');
    return new ProviderError(`connection failed: ${causeMessages(error)}`, { code });
  }
  // "Failed to process successful response": the body broke after a 2xx head, so the cause is the failure.
  if (status >= 200 && status < 300) {
    return error.cause === undefined
      ? new ProviderError(`stream interrupted: ${error.message}`, { code: 'ECONNRESET' })
      : describe(error.cause, now);
  }
  const headers = error.responseHeaders === undefined ? undefined : new Headers(error.responseHeaders);
  const retryAfterMs = parseRetryAfter(headers, now);
  const code = bodyCode(error.data) ?? `http_${status}`;
  return new ProviderError(error.message, {
    status,
    code,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** The vendor's own error code from the parsed body: `error.code`, `error.type`, or a top-level `type`. */
function bodyCode(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as Record<string, unknown>;
  const inner = typeof record['error'] === 'object' && record['error'] !== null ? record['error'] : record;
  for (const key of ['code', 'type'] as const) {
    const value = (inner as Record<string, unknown>)[key];
    if (typeof value === 'string' && value.length > 0 && value !== 'error') return value;
  }
  return undefined;
}

/**
 * An `error` part holding the vendor's error object, sent inside a 200 stream: Anthropic's
 * `{ type: 'overloaded_error', message }`, OpenAI's `{ message, type, code }`. A failure on the server's side.
 */
function fromStreamErrorObject(error: unknown): ProviderError {
  const record = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const code = bodyCode(record) ?? 'api_error';
  const status =
    typeof record['code'] === 'number'
      ? record['code']
      : code === 'overloaded_error'
        ? 529
        : code.includes('rate_limit')
          ? 429
          : 500;
  const message = typeof record['message'] === 'string' ? record['message'] : JSON.stringify(error);
  return new ProviderError(`stream error (${code}): ${message ?? String(error)}`, { status, code });
}
