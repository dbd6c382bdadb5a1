import { APIConnectionError, APIConnectionTimeoutError, APIError, OpenAIError } from 'openai';
import { scrubSecrets } from '../../core/index.js';
import { ProviderError } from '../model-provider.js';
import { causeMessages, networkCode, parseRetryAfter } from '../transport-errors.js';

/** What error mapping needs from the call: the secret to scrub and the time to measure a Retry-After date. */
export interface ErrorContext {
  readonly secret: string | undefined;
  readonly now: number;
}

const maxMessageLength = 1000;

/** Replace `secret` in `text` with `***`, in every form it may be echoed in (raw, URL/JSON-encoded, long runs). */
export function scrubSecret(text: string, secret: string | undefined): string {
  return secret === undefined || secret.length === 0 ? text : scrubSecrets(text, [secret]);
}

/**
 * Map anything the SDK (or the stream under it) threw to a `ProviderError` whose message and code never
 * contain the secret. The SDK error is not kept as `cause`: its own message may echo the secret.
 */
export function toProviderError(error: unknown, context: ErrorContext): ProviderError {
  const scrub = (text: string): string => truncate(scrubSecret(text, context.secret));
  if (error instanceof ProviderError) return error;
  // The SDK's JSON.parse of an SSE frame's data.
  if (error instanceof SyntaxError) {
    return new ProviderError('malformed response: a streamed event was not valid JSON', {
      status: 502,
      code: 'malformed_response',
    });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError('request timed out', { code: 'ETIMEDOUT' });
  }
  if (error instanceof APIConnectionError) {
    const code = networkCode(error) ?? 'ECONNRESET';
    return new ProviderError(scrub(`connection failed: ${causeMessages(error)}`), { code });
  }
  if (error instanceof APIError) {
    const { status, headers, message } = error as { status: unknown; headers: unknown; message: string };
    return fromApiError(
      {
        status: typeof status === 'number' ? status : undefined,
        headers: headers instanceof Headers ? headers : undefined,
        body: (error as { error: unknown }).error,
        message,
      },
      context,
      scrub,
    );
  }
  if (error instanceof OpenAIError) return new ProviderError(scrub(error.message));
  // Anything else surfaced while reading the body: undici's "terminated" when the socket closes mid-stream.
  const message = error instanceof Error ? causeMessages(error) : String(error);
  return new ProviderError(scrub(`stream interrupted: ${message}`), {
    code: networkCode(error) ?? 'ECONNRESET',
  });
}

/** The parts of the SDK's `APIError` the mapping reads (its generics are `any`). */
interface ApiErrorFields {
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  /** The body's `error` member: an object, a bare string (Ollama), or undefined. */
  readonly body: unknown;
  readonly message: string;
}

function fromApiError(error: ApiErrorFields, context: ErrorContext, scrub: (text: string) => string) {
  const body = error.body;
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const rawCode = fields['code'];
  const type = fields['type'];
  // OpenRouter reports errors inside a stream as `{ error: { code: 502, message } }`: a status, not a code.
  const status = error.status ?? (typeof rawCode === 'number' ? rawCode : undefined);
  const code =
    typeof rawCode === 'string' && rawCode.length > 0
      ? rawCode
      : typeof type === 'string' && type.length > 0
        ? type
        : undefined;
  const message = apiMessage(error, body);
  const retryAfterMs = parseRetryAfter(error.headers, context.now);
  return new ProviderError(scrub(message), {
    ...(status === undefined ? {} : { status }),
    ...(code === undefined ? {} : { code: scrub(code) }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** The API's own message: `error.message` of the body, a bare string body (Ollama), else the SDK's text. */
function apiMessage(error: ApiErrorFields, body: unknown): string {
  if (typeof body === 'string') return body;
  const message =
    typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  if (typeof message === 'string') return message;
  if (message !== undefined) return JSON.stringify(message);
  const prefix = error.status === undefined ? '' : `${error.status} `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

function truncate(text: string): string {
  return text.length <= maxMessageLength ? text : `${text.slice(0, maxMessageLength)}…`;
}
