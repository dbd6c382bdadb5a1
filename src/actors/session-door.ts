import type { LiveSession } from './session-registry.js';

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
