import type { Clock } from '../core/index.js';
import type { RuntimeError } from '../core/index.js';
import type { Ledger, RunRecord } from '../ledger/index.js';
import type { ReconcileDefaults } from './session-reconcile.js';
import type { SessionActor, SessionMachine } from './session-machine.js';
import { loadSession, type RegistryState } from './session-hydrate.js';
import { stopSession } from './session-stop.js';
import { recordOf } from './session-record.js';

/** A session whose actor is running in this process. */
export interface LiveSession {
  readonly key: string;
  readonly actor: SessionActor;
  /** Fence epoch: bumped each time the session is hydrated. */
  readonly epoch: number;
  /** Seq of the session's last event. */
  lastSeq: number;
  /** Settles once every admission in progress (writing its inbox record, not yet applied) is done. */
  admitting: Promise<void> | undefined;
}

/** Keeps the live sessions; hydrates from and hibernates to the ledger. */
export interface SessionRegistry {
  live(key: string): LiveSession | undefined;
  /** Every live session. */
  all(): LiveSession[];
  /** The live session, hydrating (or creating) it when needed. */
  acquire(key: string): Promise<LiveSession>;
  /**
   * The session's next hydrate holds this run, left `running` by a crash or a dead worker, and resumes it (it
   * goes on from its last durable boundary, ahead of the session's queued messages).
   */
  resumeOnLoad(run: RunRecord): void;
  /** Write a live session's record (override, snapshot, epoch, seq). */
  persist(session: LiveSession): Promise<void>;
  /** Stop an idle session's actor, keeping its snapshot in the ledger. False when it is not idle. */
  hibernate(key: string): Promise<boolean>;
  /** Persist and stop every live session. */
  stopAll(): Promise<void>;
  /** Stop a session's actor and forget it without writing (a cluster worker that lost the session). */
  evict(key: string): void;
  /**
   * Evict the live sessions and hold every `acquire` of them until `until` settles (their state is being rebuilt
   * in the ledger); they hydrate from the ledger after. Returns their keys.
   */
  suspendAll(until: Promise<void>): string[];
  readonly size: number;
}

/** The registry's state: its dependencies, no live session, no run to resume yet. */
function registryState(options: Omit<RegistryState, 'sessions' | 'resuming'>): RegistryState {
  return { ...options, sessions: new Map<string, LiveSession>(), resuming: new Map<string, RunRecord>() };
}

/** Create the registry for one runtime. */
export function createSessionRegistry(options: {
  machine: SessionMachine;
  ledger: Ledger;
  clock: Clock;
  /** Drain timing for queued messages the snapshot did not know. */
  defaults: ReconcileDefaults;
  /** Told about a session that cannot be hydrated because a row of it is corrupt (before its caller is). */
  onCorrupt?: (error: RuntimeError) => void;
}): SessionRegistry {
  const registry = registryState(options);
  const { ledger, clock, sessions } = registry;
  const loading = new Map<string, Promise<LiveSession>>();
  const suspended = new Map<string, Promise<void>>();
  const evict = (key: string): void => {
    const session = sessions.get(key);
    if (session === undefined) return;
    sessions.delete(key);
    stopSession(session.actor);
  };
  return {
    live: (key) => sessions.get(key),
    all: () => [...sessions.values()],
    acquire(key) {
      const held = suspended.get(key);
      if (held !== undefined) return held.then(() => this.acquire(key));
      const live = sessions.get(key);
      if (live !== undefined) return Promise.resolve(live);
      let pending = loading.get(key);
      if (pending === undefined) {
        pending = loadSession(registry, key).finally(() => loading.delete(key));
        loading.set(key, pending);
      }
      return pending;
    },
    resumeOnLoad: (run) => registry.resuming.set(run.sessionKey, run),
    persist: (session) => ledger.putSession(recordOf(session, clock.now())),
    hibernate: (key) => hibernate(registry, key),
    stopAll: () => stopAll(registry),
    evict,
    suspendAll(until) {
      const keys = [...sessions.keys(), ...loading.keys()];
      const settled = until.then(
        () => undefined,
        () => undefined,
      );
      for (const key of keys) {
        evict(key);
        suspended.set(key, settled);
      }
      void settled.then(() => {
        for (const key of keys) if (suspended.get(key) === settled) suspended.delete(key);
      });
      return keys;
    },
    get size() {
      return sessions.size;
    },
  };
}

/** Stop an idle session's actor, keeping its snapshot in the ledger. False when it is not idle. */
async function hibernate(registry: RegistryState, key: string): Promise<boolean> {
  const { ledger, clock, sessions } = registry;
  const session = sessions.get(key);
  if (session === undefined || !session.actor.getSnapshot().matches({ idle: 'empty' })) return false;
  // A message being written is not applied yet: the session only looks idle.
  if (session.admitting !== undefined) return false;
  // Write first, then forget: a later hydrate reads what this wrote (the ledger orders reads after writes).
  const written = ledger.putSession(recordOf(session, clock.now()));
  sessions.delete(key);
  stopSession(session.actor);
  await written;
  return true;
}

/** Persist and stop every live session. */
async function stopAll(registry: RegistryState): Promise<void> {
  const { ledger, clock, sessions } = registry;
  // Admissions writing their record apply before the snapshot is taken.
  await Promise.all(
    [...sessions.values()].flatMap((session) => (session.admitting === undefined ? [] : [session.admitting])),
  );
  const all = [...sessions.values()];
  const writes = all.map((session) => ledger.putSession(recordOf(session, clock.now())));
  for (const session of all) {
    sessions.delete(session.key);
    stopSession(session.actor);
  }
  await Promise.all(writes);
}
