import type { Clock } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';

/** The bounds of one `url` part's download. */
export interface DownloadLimits {
  /** The whole download (headers and body) must finish within this many ms, on the injected clock. */
  readonly timeoutMs: number;
  /** The most bytes the body may have. */
  readonly maxBytes: number;
  /** Media types the response may have (`image/*` patterns allowed). */
  readonly mediaTypes: readonly string[];
}

/** A downloaded body and its media type (from the response's `content-type`, without parameters). */
export interface Download {
  readonly bytes: Uint8Array;
  readonly mediaType: string;
}

/**
 * An address as errors show it: origin and last path segment only. Query strings, user info and the rest of the
 * path can hold credentials (a Telegram file URL carries the bot token), and errors reach logs.
 */
export function describeUrl(address: string): string {
  try {
    const url = new URL(address);
    const last = url.pathname
      .split('/')
      .filter((piece) => piece.length > 0)
      .at(-1);
    return url.origin === 'null'
      ? `a ${url.protocol} URL`
      : `${url.origin}/${last === undefined ? '' : `…/${last}`}`;
  } catch {
    return 'an invalid URL';
  }
}

/** The refusal of a part's download; no `cause`: fetch's errors may quote the full address. */
function refused(address: string, reason: string): RuntimeError {
  const url = describeUrl(address);
  return new RuntimeError('invalid_input', `url part ${url}: ${reason}`, { details: { url } });
}

/** True when `mediaType` is allowed by one of `patterns` (`type/*` covers a whole type, `*\/*` everything). */
export function mediaTypeAllowed(mediaType: string, patterns: readonly string[]): boolean {
  const [type] = mediaType.split('/');
  return patterns.some(
    (pattern) => pattern === '*/*' || pattern === mediaType || pattern === `${type ?? ''}/*`,
  );
}

/** Parse and check a part's address: only `http:` and `https:` are fetched. */
export function parseDownloadUrl(address: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw refused(address, 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused(address, `only http and https are fetched, not ${url.protocol.replace(/:$/, '')}`);
  return url;
}

async function readCapped(response: Response, address: string, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes)
    throw refused(address, `the body has ${declared} bytes, more than the limit of ${maxBytes}`);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (reader === undefined) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw refused(address, `the body exceeds the limit of ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Download a `url` part's body: http(s) only, within `timeoutMs` of the injected clock, at most `maxBytes`, and
 * only with an allowed `content-type`. Every failure is `invalid_input` naming the address (never its body).
 */
export async function downloadPart(address: string, limits: DownloadLimits, clock: Clock): Promise<Download> {
  const url = parseDownloadUrl(address);
  const controller = new AbortController();
  const timer = clock.setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: 'follow' });
    if (!response.ok) {
      await response.body?.cancel();
      throw refused(address, `the server answered HTTP ${response.status}`);
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (mediaType === '' || !mediaTypeAllowed(mediaType, limits.mediaTypes)) {
      await response.body?.cancel();
      throw refused(address, `content type "${mediaType || 'none'}" is not allowed`);
    }
    return { bytes: await readCapped(response, address, limits.maxBytes), mediaType };
  } catch (error) {
    if (controller.signal.aborted)
      throw refused(address, `the download took longer than ${limits.timeoutMs} ms`);
    if (error instanceof RuntimeError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw refused(address, `the download failed: ${message.split(address).join(describeUrl(address))}`);
  } finally {
    clock.clearTimeout(timer);
  }
}
