/** Reading what an SDK call failed with: shared by the provider adapters. */
import { scrubSecrets } from '../core/index.js';
import { ProviderError } from './model-provider.js';

/** Retry-After as milliseconds: `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Headers | undefined, now: number): number | undefined {
  const milliseconds = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.round(milliseconds);
  const value = headers?.get('retry-after')?.trim();
  if (value === undefined || value.length === 0) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number.parseFloat(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The first errno-style code (ECONNREFUSED, ECONNRESET, ETIMEDOUT…) along the cause chain. */
export function networkCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/** The messages along the cause chain, outermost first ("fetch failed: connect ECONNREFUSED …"); '' if none. */
export function causeMessages(error: unknown): string {
  const messages: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    if (current.message.length > 0 && !messages.includes(current.message)) messages.push(current.message);
    current = current.cause;
  }
  return messages.join(': ');
}

const maxMessageLength = 1000;

/** The error with `secret` (in every echoed form) replaced by `***` in message and code, the message capped. */
export function scrubProviderError(error: ProviderError, secret: string | undefined): ProviderError {
  const clean = (text: string): string =>
    secret === undefined || secret.length === 0 ? text : scrubSecrets(text, [secret]);
  const message = clean(error.message);
  const code = error.code === undefined ? undefined : clean(error.code);
  if (message === error.message && code === error.code && message.length <= maxMessageLength) return error;
  const capped = message.length <= maxMessageLength ? message : `${message.slice(0, maxMessageLength)}…`;
  return new ProviderError(capped, {
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(code === undefined ? {} : { code }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  });
}
