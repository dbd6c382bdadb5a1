import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { z } from 'zod';
import { abortReason, maxDurationMs, systemClock, type Clock } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';
import { anthropicInlineCapabilities } from '../../policies/index.js';
import { createEventFolder, toAnthropicParams } from './anthropic-wire.js';
import {
  ProviderError,
  type ModelCallOptions,
  type ModelPart,
  type ModelProvider,
  type ModelRequest,
} from '../model-provider.js';
import { causeMessages, networkCode, parseRetryAfter, scrubProviderError } from '../transport-errors.js';

/** Options of `anthropicProvider`. */
export interface AnthropicProviderOptions {
  /**
   * The API's base URL, e.g. a proxy or a loopback test server.
   * @default process.env.ANTHROPIC_BASE_URL, else 'https://api.anthropic.com' (the SDK's default)
   */
  readonly baseURL?: string;
  /**
   * The key used when a call brings no auth-profile credential: a value, or an environment variable read at call
   * time. Never logged.
   * @default undefined (a call without a credential then fails with code 'missing_api_key')
   */
  readonly apiKey?: string | { readonly env: string };
  /**
   * Headers added to every request.
   * @default {}
   */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /**
   * How long to wait for the response headers; the streamed body is bounded by the run's own timeout.
   * @default 600_000 (the SDK's)
   */
  readonly timeoutMs?: number;
  /**
   * `max_tokens` for the answer; a thinking budget is added on top so thinking never starves the answer.
   * @default 4096
   */
  readonly maxTokens?: number;
  /**
   * The clock a `retry-after` HTTP date is measured against.
   * @default systemClock
   */
  readonly clock?: Clock;
}

const optionsSchema = z.object({
  baseURL: z.url().optional(),
  apiKey: z.union([z.string().min(1), z.object({ env: z.string().min(1) })]).optional(),
  defaultHeaders: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.int().min(1).max(maxDurationMs).optional(),
  maxTokens: z.int().min(1).default(4096),
  clock: z
    .custom<Clock>(
      (value) =>
        typeof value === 'object' && value !== null && typeof (value as Partial<Clock>).now === 'function',
      { message: 'expected a Clock with a now() method' },
    )
    .default(systemClock),
});

type ParsedOptions = z.output<typeof optionsSchema>;

function parseOptions(options: AnthropicProviderOptions): ParsedOptions {
  const parsed = optionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  // Issue messages name the field and the expected type, never the value, so a key cannot leak here.
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.map(String).join('.') || 'options'}: ${issue.message}`,
  );
  throw new RuntimeError('invalid_input', `invalid anthropicProvider options: ${problems.join('; ')}`, {
    details: { issues: problems },
  });
}

function resolveSecret(options: ParsedOptions, call: ModelCallOptions): string {
  const configured = options.apiKey;
  const secret =
    call.credential?.secret ?? (typeof configured === 'object' ? process.env[configured.env] : configured);
  if (secret) return secret;
  const where =
    typeof configured === 'object' ? `environment variable ${configured.env} is empty` : 'none given';
  throw new ProviderError(`Anthropic API key missing (${where}): pass apiKey or an auth profile`, {
    status: 401,
    code: 'missing_api_key',
  });
}

interface FailureContext {
  readonly clock: Clock;
  /** Whether the response had started streaming: a transport failure then means a cut stream. */
  readonly streaming: boolean;
}

/**
 * Translate whatever the SDK threw into a ProviderError. Transport failures carry the errno code the failover
 * policy knows (ETIMEDOUT, ECONNREFUSED, ECONNRESET for a cut stream) and no status. SDK errors are not kept as
 * `cause`: their bodies may echo the key.
 */
function describeFailure(error: unknown, context: FailureContext): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError('Anthropic request timed out before the response started', {
      code: 'ETIMEDOUT',
    });
  }
  if (error instanceof APIConnectionError) {
    const code = networkCode(error) ?? 'ECONNRESET';
    return new ProviderError(`Anthropic connection failed: ${causeMessages(error) || String(error)}`, {
      code,
    });
  }
  if (error instanceof APIError) {
    const type = error.type ?? undefined;
    const message = error.apiMessage ?? error.message;
    if (error.status === undefined) {
      // An `event: error` frame inside a 200 stream: Anthropic reports overload this way mid-answer.
      const status = type === 'overloaded_error' ? 529 : 500;
      return new ProviderError(`Anthropic stream error (${type ?? 'api_error'}): ${message}`, {
        status,
        code: type ?? 'api_error',
      });
    }
    const status = error.status as number;
    const retryAfterMs = parseRetryAfter(error.headers as Headers | undefined, context.clock.now());
    return new ProviderError(`Anthropic ${status} (${type ?? 'http_error'}): ${message}`, {
      status,
      code: type ?? `http_${status}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (error instanceof SyntaxError) {
    return new ProviderError('Anthropic sent a stream event that is not valid JSON', {
      status: 502,
      code: 'malformed_response',
    });
  }
  // Anything else came from reading the body (undici's "terminated") or from below the SDK.
  const code = networkCode(error) ?? (context.streaming ? 'ECONNRESET' : 'unknown_error');
  const what = context.streaming ? 'Anthropic stream was cut' : 'Anthropic request failed';
  return new ProviderError(`${what}: ${causeMessages(error) || String(error)}`, { code });
}

async function* streamMessage(
  options: ParsedOptions,
  request: ModelRequest,
  call: ModelCallOptions,
): AsyncGenerator<ModelPart, void, undefined> {
  const { signal } = call;
  if (signal.aborted) throw abortReason(signal);
  const secret = resolveSecret(options, call);
  // One client per call: the key differs per auth profile, and a client is cheap next to a model call.
  // The SDK sends `apiKey` as `Authorization: Bearer`; the key goes as `x-api-key` instead, the header every
  // Anthropic-compatible endpoint accepts. Passing `apiKey` still matters: it keeps the SDK from reading
  // ANTHROPIC_API_KEY or a credentials profile from the machine.
  const client = new Anthropic({
    apiKey: secret,
    defaultHeaders: { 'x-api-key': secret, authorization: null, ...options.defaultHeaders },
    maxRetries: 0, // the runtime rotates profiles and fails over itself
    logLevel: 'off', // the SDK's logs may quote stream data; nothing of a call is logged
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  });
  const folder = createEventFolder();
  // Built before the call: a request it cannot express (audio) fails as it is, not as a transport failure.
  const params = toAnthropicParams(request, options.maxTokens);
  let streaming = false;
  try {
    const events = await client.messages.create(params, { signal });
    streaming = true;
    for await (const event of events) {
      for (const part of folder.fold(event)) yield part;
    }
    // The SDK ends its stream quietly when aborted.
    if (signal.aborted) throw abortReason(signal);
    folder.end();
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    throw scrubProviderError(describeFailure(error, { clock: options.clock, streaming }), secret);
  }
}

/** A ModelProvider on Anthropic's Messages API, streamed through the official SDK. Throws `invalid_input` on bad options. */
export function anthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const parsed = parseOptions(options);
  return {
    stream: (request, call) => streamMessage(parsed, request, call),
    inlineCapabilities: anthropicInlineCapabilities,
  };
}
