import type { Cluster } from './create-cluster.js';
import type { Request } from './requests.js';
import { RuntimeError } from '../core/index.js';
import type { Session } from '../actors/index.js';

/** The calls of a session handle that act on the live session, and so run on the worker that holds it. */
const forwarded = [
  'send',
  'abort',
  'waitForEnd',
  'configure',
  'preferProfile',
  'approve',
  'supplyToolResult',
  'undo',
  'configureTools',
  'executePlan',
  'approvePlan',
  'reportDeliveryInDoubt',
  'queue.cancel',
  'queue.clear',
] as const;

/** A call that a worker forwards to the session's holder. */
export type ForwardedKind = (typeof forwarded)[number];

/** The reads of a session handle that answer what the live session holds, asked of its holder. */
const asked = ['readStatus', 'readQueue'] as const;

/** A read that a worker asks of the session's holder. */
type AskedKind = (typeof asked)[number];

/** The read of many sessions' `status()` at once (`runtime.sessions()`), asked of each holder with its keys. */
export const statusesKind = 'readStatuses';

/** The `status()` of each key of a `readStatuses` request, on this worker. */
function serveStatuses(handleOf: (key: string) => Session, payload: unknown): Promise<unknown> {
  const keys: unknown = Array.isArray(payload) ? payload[0] : undefined;
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
    return Promise.reject(new RuntimeError('invalid_input', `${statusesKind}: the keys must be strings`));
  }
  return Promise.resolve(keys.map((key) => handleOf(key).status()));
}

type Call = (...args: unknown[]) => Promise<unknown>;

/** The local implementation of `kind` on a handle. */
function callOf(handle: Session, kind: string): Call | undefined {
  if (kind === 'queue.cancel') return (messageId) => handle.queue.cancel(messageId as string);
  if (kind === 'queue.clear') return () => handle.queue.clear();
  if (![...forwarded, ...asked].includes(kind as ForwardedKind)) return undefined;
  const methods = handle as unknown as Record<string, Call>;
  return (...args) => (methods[kind] as Call)(...args);
}

/** Arguments as they travel: trailing `undefined`s dropped (JSON would turn them into `null`, which is refused). */
function wireArgs(args: readonly unknown[]): unknown[] {
  let end = args.length;
  while (end > 0 && args[end - 1] === undefined) end--;
  return args.slice(0, end);
}

/** Serve a forwarded call on this worker's handle of the session. */
export function serveForwarded(handleOf: (key: string) => Session, request: Request): Promise<unknown> {
  if (request.kind === statusesKind) return serveStatuses(handleOf, request.payload);
  const call = callOf(handleOf(request.sessionKey), request.kind);
  if (call === undefined || !Array.isArray(request.payload)) {
    return Promise.reject(new RuntimeError('invalid_input', `unknown forwarded call "${request.kind}"`));
  }
  return call(...(request.payload as unknown[]));
}

/**
 * The handle of a session on a cluster worker: calls that act on the live session run here when this worker holds
 * the session (claiming it when no live worker does), else on its holder, whose answer they resolve with.
 * `readStatus()` and `readQueue()` are answered by the holder too (here when no live worker holds the session:
 * a read claims nothing). Reads of the ledger (transcript, runs) and event streams work on any worker;
 * `status()` and `queue.list()` are synchronous and answer for a session this worker holds (idle and empty
 * elsewhere).
 */
export function clusterSession(local: Session, cluster: Cluster, ready: Promise<void>): Session {
  const sessionKey = local.key;
  const route =
    (kind: ForwardedKind) =>
    (...args: unknown[]): Promise<never> => {
      const call = callOf(local, kind) as Call;
      const request: Request = { sessionKey, kind, payload: wireArgs(args) };
      // Before the worker started (or when it failed to), a call waits for (or fails with) its start.
      if (!cluster.owns(sessionKey))
        return ready.then(() => cluster.route(request, () => call(...args))) as never;
      return cluster.route(request, () => call(...args)) as Promise<never>;
    };
  const ask = (kind: AskedKind) => (): Promise<never> => {
    const call = callOf(local, kind) as Call;
    const request: Request = { sessionKey, kind, payload: [] };
    if (!cluster.owns(sessionKey)) return ready.then(() => cluster.ask(request, () => call())) as never;
    return call() as Promise<never>;
  };
  const session: Session = {
    ...local,
    readStatus: ask('readStatus'),
    readQueue: ask('readQueue'),
    send: route('send'),
    steer: (input) => session.send(input, { mode: 'steer' }),
    abort: route('abort'),
    waitForEnd: route('waitForEnd'),
    configure: route('configure'),
    preferProfile: route('preferProfile'),
    approve: route('approve'),
    supplyToolResult: route('supplyToolResult'),
    undo: route('undo'),
    configureTools: route('configureTools'),
    executePlan: route('executePlan'),
    approvePlan: route('approvePlan'),
    reportDeliveryInDoubt: route('reportDeliveryInDoubt'),
    queue: { list: () => local.queue.list(), cancel: route('queue.cancel'), clear: route('queue.clear') },
  };
  return session;
}
