import type { LiveSession } from './session-registry.js';
import { RuntimeError } from '../core/index.js';
import type { Ledger, SessionLoad, SessionState } from '../ledger/index.js';

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

/** The doors of one registry: `live` reads a live session, `load` hydrates one. */
export function createSessionDoors(
  live: (key: string) => LiveSession | undefined,
  load: (key: string) => Promise<LiveSession>,
): SessionDoors {
  return new Doors(live, load);
}

/** The open doors by session key; a door closes (is deleted) as soon as nothing is in progress at it. */
class Doors implements SessionDoors {
  private readonly doors = new Map<string, Door>();
  private ready: Promise<void> = Promise.resolve();

  constructor(
    private readonly live: (key: string) => LiveSession | undefined,
    private readonly load: (key: string) => Promise<LiveSession>,
  ) {}

  readonly enter = <T>(
    key: string,
    work: (session: LiveSession) => Promise<T>,
    options: EnterOptions = {},
  ): Promise<T> => {
    const holds = options.holds === true;
    const session = this.live(key);
    if (session !== undefined && !this.doors.has(key)) {
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

  /** Start the waiting calls in order, until one holds the door or the session must hydrate first. */
  private pump(key: string, door: Door, acquired: LiveSession | undefined): void {
    if (door.held !== undefined || door.opening) return;
    let session = acquired ?? this.live(key);
    for (let caller = door.waiting[0]; caller !== undefined; caller = door.waiting[0]) {
      if (session === undefined) return this.open(key, door);
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
  if (ledger.loadSessions === undefined) return (sessionKey) => ledger.loadSession(sessionKey);
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
  return (sessionKey) =>
    new Promise<SessionState>((resolve, reject) => {
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(flush);
      }
      const waiters = waiting.get(sessionKey);
      if (waiters === undefined) waiting.set(sessionKey, [{ resolve, reject }]);
      else waiters.push({ resolve, reject });
    });
}

/** One loader per ledger, so that every hydration reading the ledger joins the same batch. */
const loaders = new WeakMap<Ledger, SessionLoader>();

/** The state of `sessionKey`, read in the batch of the hydrations asked for in the same stretch (see above). */
export function loadSessionState(ledger: Ledger, sessionKey: string): Promise<SessionState> {
  let loader = loaders.get(ledger);
  if (loader === undefined) {
    loader = createSessionLoader(ledger);
    loaders.set(ledger, loader);
  }
  return loader(sessionKey);
}
