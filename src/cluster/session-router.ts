import type { WorkerLease } from './worker-lease.js';
import { claimSession, releaseSession } from './session-owners.js';
import type { ClusterDatabase } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';
import {
  answerOf,
  forwardRequest,
  unpackAnswer,
  type Answer,
  type Request,
  type RequestDeps,
} from './requests.js';

/** What the router asks of the runtime it serves. */
export interface ClusterHost {
  /**
   * This worker (as `workerId`) just claimed `sessionKey`, which moved its epoch to `epoch` (the previous owner is
   * fenced out already): write it under that epoch and lease, close the runs the previous owner left open as
   * crashed, and bring the session live (which queues its pending messages in order).
   */
  adopt(sessionKey: string, epoch: number, workerId: string): Promise<void>;
  /** Run a forwarded call on the live session (this worker holds it). */
  serve(request: Request): Promise<unknown>;
  /** This worker's lease ran out: these sessions are someone else's; stop them without writing. */
  drop(sessionKeys: readonly string[]): void;
  /** False once the runtime is closing: forwarded calls are sent back, to be placed again once it left. */
  accepting(): boolean;
}

/** Sends each call of a session to the worker that holds it, claiming the session when no live worker does. */
export interface SessionRouter {
  /** True when this worker holds `sessionKey` and its lease is valid. */
  owns(sessionKey: string): boolean;
  /** The sessions this worker holds. */
  owned(): string[];
  /** Run `local` here when this worker holds (or could claim) the session, else forward the call to its holder. */
  route<T>(request: Request, local: () => Promise<T>): Promise<T>;
  /**
   * Answer a read (`readStatus`, `readQueue`) where the session lives: `local` here when this worker holds it or no
   * live worker does (a read never claims a session), else on its holder, asked like a forwarded call.
   */
  ask<T>(request: Request, local: () => Promise<T>): Promise<T>;
  /**
   * Answer the read `kind` of many sessions (the answers in `keys`' order): one request per live worker holding
   * some of them (payload: its keys), and `local` for those this worker holds or no live worker does, or whose
   * holder did not answer.
   */
  askMany<T>(
    kind: string,
    keys: readonly string[],
    local: (keys: readonly string[]) => Promise<T[]>,
  ): Promise<T[]>;
  /** Claim the session (a takeover) and adopt it, unless a live worker holds it: resolves whether it is held here. */
  claim(sessionKey: string): Promise<boolean>;
  /** Serve a call forwarded here: through the same per-session order as calls made here. */
  serve(request: Request): Promise<Answer>;
  /** The lease was lost: forget every session (the host drops them). */
  lost(): void;
}

/** A call placed: run here (the local call already started), or forwarded (its answer, or undefined: retry). */
type Placed<T> = { readonly started: Promise<T> } | { readonly forwarded: Promise<Answer | undefined> };

/** What the router needs. */
export interface RouterDeps {
  readonly database: ClusterDatabase;
  readonly lease: WorkerLease;
  readonly requests: RequestDeps;
  readonly host: () => ClusterHost;
}

/** Per-session chains: a step starts once the session's previous step settled. */
function createChains() {
  const chains = new Map<string, Promise<unknown>>();
  const chain = <T>(key: string, step: () => Promise<T>): Promise<T> => {
    const next = (chains.get(key) ?? Promise.resolve()).then(step, step);
    const tail = next.catch(() => undefined);
    chains.set(key, tail);
    void tail.then(() => {
      if (chains.get(key) === tail) chains.delete(key);
    });
    return next;
  };
  return Object.assign(chain, { busy: (key: string) => chains.has(key) });
}

/**
 * Make this worker the session's holder if it can: true when it holds it (adopted) afterwards, else the id of the
 * live worker that does. A failed adoption gives the session up again.
 */
function createHold(deps: RouterDeps, epochs: Map<string, number>) {
  const { database, lease } = deps;
  return async (key: string): Promise<string | true> => {
    if (!lease.valid()) await lease.renew();
    if (epochs.has(key)) return true;
    const workerId = lease.workerId;
    const ownership = await claimSession(database, key, workerId);
    if (!ownership.mine) return ownership.workerId;
    epochs.set(key, ownership.epoch);
    try {
      await deps.host().adopt(key, ownership.epoch, workerId);
    } catch (error) {
      epochs.delete(key);
      await releaseSession(database, key, workerId).catch(() => undefined);
      throw error;
    }
    return true;
  };
}

/** The live worker whose owner row names it holder of `key`, if any (nothing is claimed). */
async function liveHolder(database: ClusterDatabase, key: string): Promise<string | undefined> {
  const { rows } = await database.query<{ worker_id: string }>(
    `SELECT o.worker_id FROM cluster_owners o JOIN cluster_workers w ON w.worker_id = o.worker_id
     WHERE o.session_key = $1 AND w.lease_until > ${nowMs}`,
    [key],
  );
  return rows[0]?.worker_id;
}

/** The live holders of those of `keys` a live worker holds. */
async function liveHolders(database: ClusterDatabase, keys: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await database.query<{ session_key: string; worker_id: string }>(
    `SELECT o.session_key, o.worker_id FROM cluster_owners o JOIN cluster_workers w ON w.worker_id = o.worker_id
     WHERE o.session_key = ANY($1) AND w.lease_until > ${nowMs}`,
    [[...keys]],
  );
  return new Map(rows.map((row) => [row.session_key, row.worker_id]));
}

/** The answers of a holder asked about `group` (its keys, in order); undefined when it did not answer them all. */
async function askHolder(
  deps: RouterDeps,
  holder: string,
  kind: string,
  group: readonly string[],
): Promise<unknown[] | undefined> {
  const request: Request = { sessionKey: group[0] ?? '', kind, payload: [group] };
  try {
    const answer = await forwardRequest(deps.requests, holder, request);
    const unpacked = answer === undefined ? undefined : unpackAnswer(answer);
    const values = unpacked?.value;
    return Array.isArray(values) && values.length === group.length ? values : undefined;
  } catch {
    // A holder that failed the read leaves its sessions to this worker's answer, as one that let them go.
    return undefined;
  }
}

/** Reads of many sessions placed like `askMany` says. */
function createAskMany(deps: RouterDeps, owns: (key: string) => boolean) {
  return async <T>(
    kind: string,
    keys: readonly string[],
    local: (keys: readonly string[]) => Promise<T[]>,
  ) => {
    const answers = new Map<string, T>();
    const elsewhere = keys.filter((key) => !owns(key));
    const holders =
      elsewhere.length === 0 ? new Map<string, string>() : await liveHolders(deps.database, elsewhere);
    const groups = new Map<string, string[]>();
    for (const [key, holder] of holders) {
      if (holder !== deps.lease.workerId) groups.set(holder, [...(groups.get(holder) ?? []), key]);
    }
    await Promise.all(
      [...groups].map(async ([holder, group]) => {
        const values = await askHolder(deps, holder, kind, group);
        group.forEach((key, index) => {
          if (values !== undefined) answers.set(key, values[index] as T);
        });
      }),
    );
    const rest = keys.filter((key) => !answers.has(key));
    const mine = rest.length === 0 ? [] : await local(rest);
    rest.forEach((key, index) => answers.set(key, mine[index] as T));
    return keys.map((key) => answers.get(key) as T);
  };
}

/** How often a read asks again when the holder it asked let the session go meanwhile, before it answers here. */
const askAttempts = 3;

/** A read placed like `ask` says: here, or on the session's live holder. */
function createAsk(deps: RouterDeps, owns: (key: string) => boolean) {
  return async <T>(request: Request, local: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; attempt < askAttempts; attempt++) {
      if (owns(request.sessionKey)) return local();
      const holder = await liveHolder(deps.database, request.sessionKey);
      if (holder === undefined || holder === deps.lease.workerId) return local();
      const answer = await forwardRequest(deps.requests, holder, request);
      const unpacked = answer === undefined ? undefined : unpackAnswer(answer);
      if (unpacked !== undefined) return unpacked.value as T;
    }
    return local();
  };
}

/**
 * Create the router. A session's calls are placed one after the other (claim or forward), so calls made on one
 * process reach the owner in call order; calls to a session this worker holds skip the chain (nothing to wait
 * for) and run at once.
 */
export function createSessionRouter(deps: RouterDeps): SessionRouter {
  const { lease } = deps;
  const epochs = new Map<string, number>();
  const chain = createChains();
  const hold = createHold(deps, epochs);
  const holds = (key: string): boolean => epochs.has(key) && lease.valid();
  const ask = createAsk(deps, holds);
  const askMany = createAskMany(deps, holds);
  const place = async <T>(request: Request, local: () => Promise<T>): Promise<Placed<T>> => {
    const holder = await hold(request.sessionKey);
    if (holder === true) return { started: local() };
    return { forwarded: forwardRequest(deps.requests, holder, request) };
  };
  const router: SessionRouter = {
    owns: holds,
    owned: () => [...epochs.keys()],
    route<T>(request: Request, local: () => Promise<T>): Promise<T> {
      const key = request.sessionKey;
      if (router.owns(key) && !chain.busy(key)) return local();
      return chain(key, () => place(request, local)).then(async (placed) => {
        if ('started' in placed) return placed.started;
        const answer = await placed.forwarded;
        const unpacked = answer === undefined ? undefined : unpackAnswer(answer);
        if (unpacked !== undefined) return unpacked.value as T;
        // The holder died, let go or is closing: place the call again (claiming it once no live worker holds it).
        if (answer !== undefined) await deps.requests.clock.sleep(deps.requests.pollMs);
        return router.route(request, local);
      });
    },
    ask: (request, local) => ask(request, local),
    askMany: (kind, keys, local) => askMany(kind, keys, local),
    claim: (key) => chain(key, () => hold(key)).then((holder) => holder === true),
    serve: (request) =>
      chain(request.sessionKey, (): Promise<{ redirect: true } | { started: Promise<unknown> }> => {
        const here = router.owns(request.sessionKey) && deps.host().accepting();
        if (!here) return Promise.resolve({ redirect: true });
        return Promise.resolve({ started: deps.host().serve(request) });
      }).then(async (placed): Promise<Answer> => {
        if ('redirect' in placed) return placed;
        try {
          return answerOf({ value: await placed.started });
        } catch (error) {
          return answerOf({ error });
        }
      }),
    lost() {
      const keys = [...epochs.keys()];
      epochs.clear();
      deps.host().drop(keys);
    },
  };
  return router;
}

/** A session's calls and reads as the cluster places them; each waits for the cluster's start. */
export type RoutedCalls = Pick<SessionRouter, 'route' | 'ask' | 'askMany'>;

/**
 * The routed calls of a cluster whose router is `current()` once opened and `started` once started: a call or
 * read of a session this worker holds runs at once, the others wait for the start.
 */
export function routedCalls(
  current: () => { readonly router: SessionRouter } | undefined,
  started: Promise<{ readonly router: SessionRouter }>,
): RoutedCalls {
  const held = (key: string): SessionRouter | undefined => {
    const router = current()?.router;
    return router?.owns(key) === true ? router : undefined;
  };
  return {
    route: (request, local) =>
      held(request.sessionKey)?.route(request, local) ??
      started.then((ready) => ready.router.route(request, local)),
    ask: (request, local) =>
      held(request.sessionKey) === undefined
        ? started.then((ready) => ready.router.ask(request, local))
        : local(),
    askMany: (kind, keys, local) => started.then((ready) => ready.router.askMany(kind, keys, local)),
  };
}
