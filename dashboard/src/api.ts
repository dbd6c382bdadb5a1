import type { RuntimeEvent } from '../../src/core/events.js';

/** A refused or failed API call: the HTTP status and the server's `{ error: { code, message } }`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Where a session stands, as `GET /v1/sessions/:key` and the session pages answer. */
export interface SessionStatus {
  readonly state: string;
  readonly runId?: string;
  readonly queued: number;
}

/** One row of `GET /v1/sessions`. */
export interface SessionSummary extends SessionStatus {
  readonly key: string;
  readonly updatedAt?: number;
}

/** One lane's load. */
export interface LaneStats {
  readonly pending: number;
  readonly running: number;
}

/** One auth profile as `runtime.stats()` reports it. */
export interface ProfileStats {
  readonly succeeded: number;
  readonly failed: number;
  readonly availableAt: number;
  readonly lastUsedAt?: number;
}

/** `GET /v1/stats`: `runtime.stats()` and the session totals. */
export interface StatsResponse {
  readonly liveSessions: number;
  readonly lanes: Readonly<Record<string, LaneStats>>;
  readonly profiles: Readonly<Record<string, ProfileStats>>;
  /** Every session the runtime knows, and how many are in each state. */
  readonly sessions?: { readonly total: number; readonly byState?: Readonly<Record<string, number>> };
  /** The server clock (ms), when the server tells it. */
  readonly now?: number;
}

/** A call waiting for an operator or for a result from outside. */
export interface PendingCall {
  readonly sessionKey: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly kind: 'approval' | 'deferred';
  readonly requestedAt?: number;
  /** A step of a paused plan run: approved or rejected, never edited. */
  readonly planStep?: true;
}

/** A message waiting in a session's queue. */
export interface QueuedMessage {
  readonly messageId: string;
  readonly text: string;
  readonly mode: string;
  readonly enqueuedAt: number;
}

/** How an operator settles an approval. */
export type ApprovalDecision =
  { readonly decision: 'approve' | 'reject' } | { readonly decision: 'edit'; readonly args: unknown };

/** One recorded event of `GET /v1/activity`: its time, type and session. */
export interface ActivityEvent {
  readonly at: number;
  readonly type: string;
  readonly sessionKey: string;
  readonly waitedMs?: number;
}

/** `GET /v1/activity`: the last minutes' events, the server clock, and the cursor to follow the stream from. */
export interface ActivityResponse {
  readonly now: number;
  readonly cursor: number;
  readonly events: readonly ActivityEvent[];
}

export type { RuntimeEvent };

function path(key: string, rest = ''): string {
  return `/v1/sessions/${encodeURIComponent(key)}${rest}`;
}

/** Unwrap a JSON answer that is either the value or `{ <name>: value }`. */
function field<T>(body: unknown, name: string): T {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && name in body) {
    return (body as Record<string, unknown>)[name] as T;
  }
  return body as T;
}

/** The `/v1` API the page talks to, every call with the bearer token. */
export function createApi(token: string, fetchImpl: typeof fetch = fetch.bind(globalThis)) {
  const request = async (url: string, init: RequestInit = {}): Promise<unknown> => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    if (init.body !== undefined) headers.set('content-type', 'application/json');
    const response = await fetchImpl(url, { ...init, headers });
    const text = await response.text();
    const body: unknown = text === '' ? undefined : JSON.parse(text);
    if (!response.ok) {
      const error = field<{ code?: string; message?: string } | undefined>(body, 'error');
      throw new ApiError(response.status, error?.code ?? 'http_error', error?.message ?? response.statusText);
    }
    return body;
  };
  const post = (url: string, body: unknown = {}) =>
    request(url, { method: 'POST', body: JSON.stringify(body) });
  return {
    token,
    /** What the token may do (`GET /v1/capabilities`): its capabilities and, for a scoped one, its prefixes. */
    capabilities: async () =>
      (await request('/v1/capabilities')) as { can: string[]; sessionKeyPrefixes?: string[] },
    stats: async () => (await request('/v1/stats')) as StatsResponse,
    /** The events of the last `seconds` as recorded (the chart and the last activities before the page opened). */
    activity: async (seconds: number) =>
      (await request(`/v1/activity?seconds=${seconds}`)) as ActivityResponse,
    sessionPage: async (after?: string) => {
      const query = new URLSearchParams({ limit: '500', ...(after === undefined ? {} : { after }) });
      return (await request(`/v1/sessions?${query.toString()}`)) as {
        sessions: SessionSummary[];
        next?: string;
      };
    },
    status: async (key: string) => (await request(path(key))) as SessionStatus,
    queue: async (key: string) => field<QueuedMessage[]>(await request(path(key, '/queue')), 'queue'),
    cancel: (key: string, messageId: string) =>
      request(path(key, `/queue/${encodeURIComponent(messageId)}`), { method: 'DELETE' }),
    abort: (key: string) => post(path(key, '/abort'), { reason: 'aborted from the dashboard' }),
    approvals: async () => field<PendingCall[]>(await request('/v1/approvals'), 'pending'),
    approve: (call: PendingCall, decision: ApprovalDecision) =>
      post(path(call.sessionKey, `/approvals/${encodeURIComponent(call.toolCallId)}`), decision),
    supply: (call: PendingCall, result: { output: unknown } | { error: string }) =>
      post(path(call.sessionKey, `/tool-results/${encodeURIComponent(call.toolCallId)}`), result),
  };
}

/** The API a signed-in page uses. */
export type Api = ReturnType<typeof createApi>;
