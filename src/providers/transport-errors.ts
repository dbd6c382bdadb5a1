/** Reading what an SDK call failed with: shared by the provider adapters. */

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
