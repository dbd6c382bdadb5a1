import type { LiveSession } from './session-registry.js';
import { RuntimeError, createDeferred, type Deferred } from '../core/index.js';
import type { Ledger, SessionLoad, SessionState } from '../ledger/index.js';
import type { SessionActor } from './session-machine.js';
import { initialSessionContext, type SessionContext, type SessionSettings } from './session-context.js';
import type { Snapshot } from 'xstate';
import { admitInto, type AdmitEvent } from './session-admission.js';

/** A call waiting at a session's door. */
interface Caller {
  readonly work: (session: LiveSession) => Promise<unknown>;
  /** An admission: the calls after it wait until it applied (its record written and its ADMIT sent) or failed. */
  readonly holds: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
}

/** One session's door, open only while something is in progress: a hydration, waiting calls or an admission. */
interface Door {
  /** Calls not started yet, oldest first. */
  readonly waiting: Caller[];
  /** The hydration in progress (every caller and every `acquire` share it). */
  loading: Promise<LiveSession> | undefined;
  /** Set while the door waits for its first caller's `after` before it hydrates. */
  opening: boolean;
  /** Settles once the admission that holds the door applied or failed; set only while one does. */
  held: Promise<void> | undefined;
}

/** How a call enters a session. */
export interface EnterOptions {
  /** An admission: later calls wait until it applied or failed. @default false */
  readonly holds?: boolean;
}

/**
 * Every way into a session, in call order: the one serialiser of a session in this process (its runs are the
 * session machine's). A call on a live session with nothing in progress runs at once, in the caller's stretch; other
 * calls wait in order behind a hydration (shared with `acquire`) or an admission that has not applied yet.
 */
export interface SessionDoors {
  /** Run `work` against the live session, in call order (hydrating it first when it is not live). */
  readonly enter: <T>(
    key: string,
    work: (session: LiveSession) => Promise<T>,
    options?: EnterOptions,
  ) => Promise<T>;
  /** The live session, hydrating it now when it is not (one hydration per session at a time). */
  acquire(key: string): Promise<LiveSession>;
  /** True while something is in progress at the session's door (it must not hibernate). */
  busy(key: string): boolean;
  /** Settles once every admission in progress applied or failed. */
  admitted(): Promise<void>;
  /** The keys of the sessions hydrating now. */
  loadingKeys(): string[];
  /** Calls into a session that is not live wait for `ready` (startup recovery) before it hydrates; `acquire` does not. */
  openAfter(ready: Promise<void>): void;
}

const settled = (): void => undefined;

/** Start `work` on `session`; a synchronous throw becomes a rejection. */
function start(work: (session: LiveSession) => Promise<unknown>, session: LiveSession): Promise<unknown> {
  try {
    return work(session);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * The doors of one registry: `live` reads a live session, `load` hydrates one, `starting` says when a live
 * session's actor has not started yet and will (a resting session with an admitted message, below): calls wait
 * for it at the door, so each finds the machine that already learned that message.
 */
export function createSessionDoors(
  live: (key: string) => LiveSession | undefined,
  load: (key: string) => Promise<LiveSession>,
  starting: (key: string) => Promise<void> | undefined = () => undefined,
): SessionDoors {
  return new Doors(live, load, starting);
}

/** The open doors by session key; a door closes (is deleted) as soon as nothing is in progress at it. */
class Doors implements SessionDoors {
  private readonly doors = new Map<string, Door>();
  private ready: Promise<void> = Promise.resolve();

  constructor(
    private readonly live: (key: string) => LiveSession | undefined,
    private readonly load: (key: string) => Promise<LiveSession>,
    private readonly starting: (key: string) => Promise<void> | undefined,
  ) {}

  readonly enter = <T>(
    key: string,
    work: (session: LiveSession) => Promise<T>,
    options: EnterOptions = {},
  ): Promise<T> => {
    const holds = options.holds === true;
    const session = this.live(key);
    if (session !== undefined && !this.doors.has(key) && this.starting(key) === undefined) {
      const result = start(work, session) as Promise<T>;
      if (holds) this.hold(key, this.doorOf(key), result);
      return result;
    }
    return new Promise<T>((resolve, reject) => {
      const door = this.doorOf(key);
      door.waiting.push({ work, holds, resolve: resolve as (value: unknown) => void, reject });
      this.pump(key, door, undefined);
    });
  };

  acquire(key: string): Promise<LiveSession> {
    const session = this.live(key);
    if (session !== undefined) return Promise.resolve(session);
    const door = this.doorOf(key);
    if (door.loading !== undefined) return door.loading;
    const loading = this.load(key).finally(() => {
      door.loading = undefined;
      this.closeIfIdle(key, door);
    });
    door.loading = loading;
    return loading;
  }

  busy(key: string): boolean {
    return this.doors.has(key);
  }

  admitted(): Promise<void> {
    const held = [...this.doors.values()].flatMap((door) => (door.held === undefined ? [] : [door.held]));
    return Promise.all(held).then(settled);
  }

  openAfter(ready: Promise<void>): void {
    this.ready = ready;
  }

  loadingKeys(): string[] {
    return [...this.doors].filter(([, door]) => door.loading !== undefined).map(([key]) => key);
  }

  private doorOf(key: string): Door {
    let door = this.doors.get(key);
    if (door === undefined) {
      door = { waiting: [], loading: undefined, opening: false, held: undefined };
      this.doors.set(key, door);
    }
    return door;
  }

  private closeIfIdle(key: string, door: Door): void {
    if (door.waiting.length > 0 || door.loading !== undefined || door.opening || door.held !== undefined)
      return;
    if (this.doors.get(key) === door) this.doors.delete(key);
  }

  /** Hold the door until the admission `result` settles, then let the next calls in. */
  private hold(key: string, door: Door, result: Promise<unknown>): void {
    door.held = result.then(settled, settled).then(() => {
      door.held = undefined;
      this.pump(key, door, undefined);
    });
  }

  /** Hydrate for the waiting calls once startup recovery is done; a failure fails every call waiting. */
  private open(key: string, door: Door): void {
    door.opening = true;
    this.ready
      .then(() => this.acquire(key))
      .then(
        (session) => {
          door.opening = false;
          this.pump(key, door, session);
        },
        (error: unknown) => {
          door.opening = false;
          for (const caller of door.waiting.splice(0)) caller.reject(error);
          this.closeIfIdle(key, door);
        },
      );
  }

  /** Wait until the session's actor started (it learns its admitted message first), then go on with the calls. */
  private awaitStart(key: string, door: Door, starting: Promise<void>): void {
    door.opening = true;
    void starting.then(() => {
      door.opening = false;
      this.pump(key, door, undefined);
    });
  }

  /** Start the waiting calls in order, until one holds the door or the session must hydrate (or start) first. */
  private pump(key: string, door: Door, acquired: LiveSession | undefined): void {
    if (door.held !== undefined || door.opening) return;
    let session = acquired ?? this.live(key);
    for (let caller = door.waiting[0]; caller !== undefined; caller = door.waiting[0]) {
      if (session === undefined) return this.open(key, door);
      const starting = this.starting(key);
      if (starting !== undefined) return this.awaitStart(key, door, starting);
      door.waiting.shift();
      const result = start(caller.work, session);
      result.then(caller.resolve, caller.reject);
      if (caller.holds) return this.hold(key, door, result);
      session = this.live(key) ?? session;
    }
    this.closeIfIdle(key, door);
  }
}

/** A hydration waiting for its session's state. */
interface Waiting {
  readonly resolve: (state: SessionState) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The most sessions one batch reads. Hydrating is all synchronous work chained on promises, which starves the
 * event loop: 10,000 sessions read in one batch were admitted in one stretch and acknowledged together at its end
 * (the group commit runs between turns). Batches of this size let each one's admissions commit and acknowledge
 * before the next batch is read; 512 is the group commit's own batch limit.
 */
const maxBatchKeys = 512;

/** Reads a session's state, gathering the reads asked for in one stretch into one `loadSessions` call. */
export type SessionLoader = (sessionKey: string) => Promise<SessionState>;

/**
 * Create a loader over `ledger`. The keys asked for before the next microtask are read together: when many sessions
 * hydrate at once (a restart, a burst of first messages) the ledger reads each table once for all of them instead of
 * once per session and table; beyond `maxBatchKeys`, the next keys are read in the next event-loop turn. A session whose row is corrupt fails alone (its `ledger_corrupt`); a failure of the
 * whole read fails every session waiting for it. A ledger without `loadSessions` is read one key at a time.
 */
export function createSessionLoader(ledger: Ledger): SessionLoader {
  return batchedLoader(ledger).load;
}

/** A loader with how many sessions wait for a read not started yet (a later batch). */
interface BatchedLoader {
  readonly load: SessionLoader;
  readonly waiting: () => number;
}

function batchedLoader(ledger: Ledger): BatchedLoader {
  if (ledger.loadSessions === undefined)
    return { load: (sessionKey) => ledger.loadSession(sessionKey), waiting: () => 0 };
  const loadSessions = ledger.loadSessions.bind(ledger);
  const waiting = new Map<string, Waiting[]>();
  const settle = (loads: readonly SessionLoad[], batch: Map<string, Waiting[]>): void => {
    const byKey = new Map(loads.map((load) => [load.sessionKey, load]));
    for (const [sessionKey, waiters] of batch) {
      const load = byKey.get(sessionKey);
      for (const waiter of waiters) {
        if (load === undefined)
          waiter.reject(
            new RuntimeError('internal', `the ledger returned no state for session "${sessionKey}"`),
          );
        else if ('error' in load) waiter.reject(load.error);
        else waiter.resolve(load.state);
      }
    }
  };
  const fail = (batch: Map<string, Waiting[]>, error: unknown): void => {
    for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
  };
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const batch = new Map<string, Waiting[]>();
    for (const [key, waiters] of waiting) {
      if (batch.size === maxBatchKeys) break;
      batch.set(key, waiters);
    }
    const keys = [...batch.keys()];
    for (const key of keys) waiting.delete(key);
    // The rest waits for the next event-loop turn: this batch's admissions commit and acknowledge first.
    if (waiting.size > 0) {
      scheduled = true;
      setImmediate(flush);
    }
    try {
      loadSessions(keys).then(
        (loads) => settle(loads, batch),
        (error: unknown) => fail(batch, error),
      );
    } catch (error) {
      fail(batch, error);
    }
  };
  const load: SessionLoader = (sessionKey) =>
    new Promise<SessionState>((resolve, reject) => {
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(flush);
      }
      const waiters = waiting.get(sessionKey);
      if (waiters === undefined) waiting.set(sessionKey, [{ resolve, reject }]);
      else waiters.push({ resolve, reject });
    });
  return { load, waiting: () => waiting.size };
}

/** One loader per ledger, so that every hydration reading the ledger joins the same batch. */
const loaders = new WeakMap<Ledger, BatchedLoader>();

function loaderOf(ledger: Ledger): BatchedLoader {
  let loader = loaders.get(ledger);
  if (loader === undefined) {
    loader = batchedLoader(ledger);
    loaders.set(ledger, loader);
  }
  return loader;
}

/** The state of `sessionKey`, read in the batch of the hydrations asked for in the same stretch (see above). */
export function loadSessionState(ledger: Ledger, sessionKey: string): Promise<SessionState> {
  return loaderOf(ledger).load(sessionKey);
}

/** How many sessions wait for a later batch of `ledger`'s loader (0 when none: the reads asked for are done). */
export function hydrationsWaiting(ledger: Ledger): number {
  return loaders.get(ledger)?.waiting() ?? 0;
}

/**
 * The most event-loop turns a resting session's start waits behind later hydration batches. Acknowledging first is
 * what makes a burst of cold sessions cheap to answer (the actors and their runs start once the reads asked for
 * are admitted); past this many batches (512 sessions each) the starts go ahead anyway, so a steady stream of new
 * hydrations cannot hold runs back.
 */
const maxStartDeferrals = 32;

/**
 * A session hydrated at rest (idle, nothing queued, no run, no pause, no plan held: what a hibernated session almost
 * always is) whose actor is not made yet. A message sent to it is admitted on its loaded context by the same pure
 * decision the machine's guards take at `idle` (admit-message.ts), recorded and acknowledged; the actor starts
 * after, learns that message with its ADMIT (once), and owns the session from then on. Whatever reads `actor`
 * starts it at once, so every reader sees the machine, never the context it was made from.
 */
export class RestingSession implements LiveSession {
  private started: SessionActor | undefined;
  private context: SessionContext | undefined;
  private admit: AdmitEvent | undefined;
  private signal: Deferred<void> | undefined;
  /** Makes the actor; dropped once it did (it holds the restored snapshot). */
  private create: (() => SessionActor) | undefined;

  constructor(
    readonly key: string,
    readonly epoch: number,
    public lastSeq: number,
    context: SessionContext,
    /** Make the session's actor (not started). */
    create: () => SessionActor,
    /** Start this session's actor soon (after the acknowledgements in progress). */
    private readonly startLater: (session: RestingSession) => void,
  ) {
    this.context = context;
    this.create = create;
  }

  get actor(): SessionActor {
    return this.started ?? this.start();
  }

  /** The context to admit a message on: while the actor is not made and no message was admitted on it. */
  restingContext(): SessionContext | undefined {
    return this.started === undefined && this.admit === undefined ? this.context : undefined;
  }

  /** Settles once the actor started, while a message admitted on the context waits for it (undefined otherwise). */
  starting(): Promise<void> | undefined {
    return this.started === undefined ? this.signal?.promise : undefined;
  }

  /** A durable message was admitted on the resting context: the actor learns it with `admit` when it starts. */
  admitOnStart(admit: AdmitEvent): void {
    this.admit = admit;
    this.signal = createDeferred<void>();
    this.startLater(this);
  }

  /** Make and start the actor, then send it the admitted message, if any. */
  start(): SessionActor {
    if (this.started !== undefined) return this.started;
    const actor = (this.create as () => SessionActor)();
    // Set before starting: what starting runs (a run's opening) may read this session's actor.
    this.started = actor;
    const { admit, signal } = this;
    this.create = undefined;
    this.context = undefined;
    this.admit = undefined;
    this.signal = undefined;
    try {
      actor.start();
      if (admit !== undefined) admitInto(actor, admit);
    } finally {
      signal?.resolve(undefined);
    }
    return actor;
  }
}

/** A persisted session snapshot as `restorable` returns it. */
interface RestoredSnapshot {
  readonly status?: unknown;
  readonly value?: unknown;
  readonly historyValue?: unknown;
  readonly context: SessionContext;
}

/**
 * The context of a session that rests (a new one, or one restored in idle.empty with nothing queued, no run, no
 * pause, no plan and no work): what admission may decide on before its actor is made. Undefined otherwise.
 */
export function restingContext(
  key: string,
  snapshot: Snapshot<unknown> | undefined,
  settings: SessionSettings,
): SessionContext | undefined {
  if (snapshot === undefined) return { ...initialSessionContext(key), ...settings };
  const { status, value, historyValue, context } = snapshot as unknown as RestoredSnapshot;
  const emptyIdle =
    typeof value === 'object' && value !== null && (value as { idle?: unknown }).idle === 'empty';
  const noHistory =
    historyValue === undefined ||
    (typeof historyValue === 'object' && historyValue !== null && Object.keys(historyValue).length === 0);
  if (status !== 'active' || !emptyIdle || !noHistory) return undefined;
  const { queue, run, pause, plans, work } = context;
  const rests = queue.length === 0 && run === null && pause === null && (plans ?? []).length === 0;
  return rests && (work ?? []).length === 0 ? context : undefined;
}

/** Settles once `session`'s actor started, while it is a resting session with an admitted message waiting for it. */
export function startingOf(session: LiveSession | undefined): Promise<void> | undefined {
  return session instanceof RestingSession ? session.starting() : undefined;
}

/**
 * Start resting sessions' actors after the acknowledgements in progress: at the end of the stretch that admitted
 * them, or, while later hydration batches of the same burst wait to be read (`hydrating` > 0), once those were
 * admitted and acknowledged too (at most `maxStartDeferrals` turns later). A start that throws does not keep the
 * others from starting; each error goes to `onError` (the runtime's), since the sends it would belong to resolved.
 */
export function createDeferredStarts(
  hydrating: () => number,
  onError: (error: unknown) => void = (error) =>
    queueMicrotask(() => {
      throw error;
    }),
): (session: RestingSession) => void {
  let due: RestingSession[] = [];
  let armed = false;
  let deferrals = 0;
  const run = (): void => {
    if (hydrating() > 0 && deferrals < maxStartDeferrals) {
      deferrals += 1;
      setImmediate(run);
      return;
    }
    armed = false;
    deferrals = 0;
    const sessions = due;
    due = [];
    for (const session of sessions) {
      try {
        session.start();
      } catch (error) {
        onError(error);
      }
    }
  };
  return (session) => {
    due.push(session);
    if (armed) return;
    armed = true;
    queueMicrotask(run);
  };
}
