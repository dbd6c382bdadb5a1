import { lookup as systemLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import {
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Clock } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import { addressAllowed, hostAllowed, publicOnlyPolicy, type FetchPolicy } from '../policies/index.js';

/** The bounds of one `url` part's download. */
export interface DownloadLimits {
  /** The whole download (every redirect hop, headers and body) must finish within this many ms, on the clock. */
  readonly timeoutMs: number;
  /** The most bytes the body may have. */
  readonly maxBytes: number;
  /** Media types the response may have (`image/*` patterns allowed). */
  readonly mediaTypes: readonly string[];
  /** When given, the response's media type must be exactly this one. */
  readonly mediaType?: string | undefined;
  /** What may be fetched besides public addresses; public addresses only when left out. */
  readonly policy?: FetchPolicy | undefined;
}

/** A downloaded body and its media type (from the response's `content-type`, without parameters). */
export interface Download {
  readonly bytes: Uint8Array;
  readonly mediaType: string;
}

/** The most redirects one download follows; each hop is judged by the fetch policy again. */
export const maxRedirects = 5;

/**
 * The one message of every refused or failed download: a refused address, a name that does not resolve, a closed
 * port, an error status, a timeout, a body too big, a bad redirect. One text, so a caller cannot tell them apart
 * (the errors are no port scanner); it names neither the address nor the reason.
 */
export const downloadRefusal =
  'url part could not be fetched: its address is not allowed, or it did not answer with an accepted body in time';

/** Why a download failed, in the error's `details.reason`: for the host's own logs, never in the message. */
export type DownloadFailure =
  'url' | 'address' | 'network' | 'status' | 'redirect' | 'type' | 'size' | 'timeout';

/** A failure inside the download, turned into the one refusal at its end. */
class DownloadFailed extends Error {
  constructor(readonly reason: DownloadFailure) {
    super(`download failed: ${reason}`);
  }
}

function refusal(reason: DownloadFailure): RuntimeError {
  return new RuntimeError('invalid_input', downloadRefusal, { details: { reason } });
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

/** True when `mediaType` is allowed by one of `patterns` (`type/*` covers a whole type, `*\/*` everything). */
export function mediaTypeAllowed(mediaType: string, patterns: readonly string[]): boolean {
  const [type] = mediaType.split('/');
  return patterns.some(
    (pattern) => pattern === '*/*' || pattern === mediaType || pattern === `${type ?? ''}/*`,
  );
}

/** Parse an address (`base` for a redirect's relative one): only `http:` and `https:`, no user info. */
function parseDownloadUrl(address: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(address, base);
  } catch {
    throw new DownloadFailed('url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DownloadFailed('url');
  if (url.username !== '' || url.password !== '') throw new DownloadFailed('url');
  return url;
}

/** A resolver giving every address of a name (`dns.lookup` with `all: true`). */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * The name lookup of one hop: the system's resolver, then every address it gave is judged, and the connection
 * goes only to those (so a name cannot resolve to a public address when checked and a private one when
 * connected: there is no second lookup). One refused address refuses the host.
 */
export function checkedLookup(policy: FetchPolicy, resolveAll: ResolveAll = systemLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, '');
      const [first] = addresses;
      if (first === undefined || addresses.some(({ address }) => !addressAllowed(address, policy)))
        return callback(new DownloadFailed('address'), '');
      if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/** The request options of one hop: its own lookup (unless the host is allowed by name), no shared sockets. */
function hopOptions(url: URL, policy: FetchPolicy, signal: AbortSignal): RequestOptions {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const options: RequestOptions = {
    hostname: host,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers: { accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'agentlanes' },
    // A fresh agent: a kept-alive socket of another download (another policy) is never reused.
    agent: false,
    signal,
  };
  if (hostAllowed(host, policy.allowHosts)) return options;
  // An IP literal is connected to without a lookup: judge it here.
  if (isIP(host) !== 0) {
    if (!addressAllowed(host, policy)) throw new DownloadFailed('address');
    return options;
  }
  return { ...options, lookup: checkedLookup(policy) };
}

/** Send one hop's request; resolves with its response head. Requests are kept in `opened` to be closed. */
function requestHop(
  url: URL,
  policy: FetchPolicy,
  signal: AbortSignal,
  opened: ClientRequest[],
): Promise<IncomingMessage> {
  const options = hopOptions(url, policy, signal);
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(options, (response) => {
      response.on('error', () => undefined); // surfaced by the body's reader, or irrelevant once refused
      resolve(response);
    });
    opened.push(request);
    request.on('error', (error) =>
      reject(error instanceof DownloadFailed ? error : new DownloadFailed('network')),
    );
    request.end();
  });
}

/** The body, at most `maxBytes` of it: a declared length over it is refused up front, a stream is cut at it. */
async function readCapped(response: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw new DownloadFailed('size');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new DownloadFailed('size');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A final (non-redirect) answer: 2xx, an allowed (and, if declared, the expected) media type, within the cap. */
async function readAnswer(response: IncomingMessage, limits: DownloadLimits): Promise<Download> {
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) throw new DownloadFailed('status');
  const mediaType = (response.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType === '' || !mediaTypeAllowed(mediaType, limits.mediaTypes)) throw new DownloadFailed('type');
  if (limits.mediaType !== undefined && limits.mediaType !== mediaType) throw new DownloadFailed('type');
  return { bytes: await readCapped(response, limits.maxBytes), mediaType };
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** Fetch `address`, following at most `maxRedirects` redirects by hand, each hop judged by the policy. */
async function follow(
  address: string,
  limits: DownloadLimits,
  signal: AbortSignal,
  opened: ClientRequest[],
): Promise<Download> {
  const policy = limits.policy ?? publicOnlyPolicy;
  let url = parseDownloadUrl(address);
  for (let hop = 0; ; hop++) {
    const response = await requestHop(url, policy, signal, opened);
    if (!redirectStatuses.has(response.statusCode ?? 0)) return readAnswer(response, limits);
    response.destroy();
    const location = response.headers.location;
    if (location === undefined || hop >= maxRedirects) throw new DownloadFailed('redirect');
    url = parseDownloadUrl(location, url);
  }
}

/**
 * Download a `url` part's body under the fetch policy (docs/attachments.md): http(s) only, to allowed addresses
 * only (every hop), within `timeoutMs` of the injected clock in all (a body that drips or never ends is cut at
 * the time or the size cap), at most `maxBytes`, and only with an allowed `content-type`. Every failure is the
 * same `invalid_input` refusal.
 */
export async function downloadPart(address: string, limits: DownloadLimits, clock: Clock): Promise<Download> {
  const controller = new AbortController();
  const opened: ClientRequest[] = [];
  let expire: (error: Error) => void = () => undefined;
  const deadline = new Promise<never>((_resolve, reject) => (expire = reject));
  const timer = clock.setTimeout(() => {
    expire(new DownloadFailed('timeout'));
    controller.abort();
  }, limits.timeoutMs);
  try {
    return await Promise.race([follow(address, limits, controller.signal, opened), deadline]);
  } catch (error) {
    throw refusal(error instanceof DownloadFailed ? error.reason : 'network');
  } finally {
    clock.clearTimeout(timer);
    for (const request of opened) request.destroy();
  }
}
