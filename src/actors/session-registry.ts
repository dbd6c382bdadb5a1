import { type Clock, RuntimeError, isRuntimeError, type TimerHandle } from '../core/index.js';
import type { Ledger, RunRecord, SessionState, InboxRecord } from '../ledger/index.js';
import {
  createSessionActor,
  type SessionActor,
  type SessionMachine,
  stopSession,
} from './session-machine.js';
import {
  recordOf,
  settingsOf,
  snapshotWithSettings,
  type PauseContext,
  type SessionContext,
  initialSessionContext,
  type QueuedMessage,
} from './session-context.js';
import type { Snapshot } from 'xstate';
import { approvalIdOfCall, pausedPlanToRestore, type HydrateState } from './session-pause.js';
import {
  loadSessionState,
  createSessionDoors,
  createDeferredStarts,
  hydrationsWaiting,
  RestingSession,
  restingContext,
  startingOf,
  type SessionDoors,
} from './session-door.js';
import { dedupeMaxIds, dedupeWindowMs, type SeenMessage } from '../policies/index.js';

/** A session whose actor is running in this process. */
export interface LiveSession {
  readonly key: string;
  readonly actor: SessionActor;
  /** Fence epoch: bumped each time the session is hydrated. */
  readonly epoch: number;
  /** Seq of the session's last event. */
  lastSeq: number;
}

/** Keeps the live sessions; hydrates from and hibernates to the ledger. */
export interface SessionRegistry {
  live(key: string): LiveSession | undefined;
  /** Every live session. */
  all(): LiveSession[];
  /** The live session, hydrating (or creating) it when needed. */
  acquire(key: string): Promise<LiveSession>;
  /** Run `work` against the live session through its door, in call order (session-door.ts). */
  readonly enter: SessionDoors['enter'];
  /** Calls into a session that is not live wait for `ready` (startup recovery) before it hydrates. */
  openAfter(ready: Promise<void>): void;
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

/** The registry's state: its dependencies, no live session, no run to resume yet, and the sessions' doors. */
function registryState(options: SessionRegistryOptions): RegistryState {
  const sessions = new Map<string, LiveSession>();
  const doors = createSessionDoors(
    (key) => sessions.get(key),
    (key) => loadSession(registry, key),
    (key) => startingOf(sessions.get(key)),
  );
  const startLater = createDeferredStarts(() => hydrationsWaiting(options.ledger), options.onError);
  const resuming = new Map<string, CutRuns>();
  const registry: RegistryState = { ...options, sessions, resuming, doors, startLater };
  return registry;
}

/** What a runtime's registry is made with: its dependencies (`RegistryState` without the sessions). */
export type SessionRegistryOptions = Omit<RegistryState, 'sessions' | 'resuming' | 'doors' | 'startLater'>;

/** Create the registry for one runtime. */
export function createSessionRegistry(options: SessionRegistryOptions): SessionRegistry {
  const registry = registryState(options);
  const { ledger, clock, sessions, doors } = registry;
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
      return doors.acquire(key);
    },
    enter: doors.enter,
    openAfter: (ready) => doors.openAfter(ready),
    resumeOnLoad(run) {
      const cut = registry.resuming.get(run.sessionKey) ?? {};
      registry.resuming.set(
        run.sessionKey,
        run.provider === 'plan' ? { ...cut, plan: run } : { ...cut, agent: run },
      );
    },
    persist: (session) => ledger.putSession(recordOf(session, clock.now())),
    hibernate: (key) => hibernate(registry, key),
    stopAll: () => stopAll(registry),
    evict,
    suspendAll(until) {
      const keys = [...sessions.keys(), ...doors.loadingKeys()];
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
  // A message being written is not applied yet, or calls wait at the door: the session only looks idle.
  if (registry.doors.busy(key)) return false;
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
  await registry.doors.admitted();
  const all = [...sessions.values()];
  const writes = all.map((session) => ledger.putSession(recordOf(session, clock.now())));
  for (const session of all) {
    sessions.delete(session.key);
    stopSession(session.actor);
  }
  await Promise.all(writes);
}

/** What the session registry's helpers share: its dependencies and the sessions live in this process. */
export interface RegistryState {
  readonly machine: SessionMachine;
  readonly ledger: Ledger;
  readonly clock: Clock;
  /** Drain timing for queued messages the snapshot did not know. */
  readonly defaults: ReconcileDefaults;
  /** Told about a session that cannot be hydrated because a row of it is corrupt (before its caller is). */
  readonly onCorrupt?: ((error: RuntimeError) => void) | undefined;
  /** Told about a hydrated session that rests idle, as the machine tells about one that goes idle. */
  readonly onIdle?: ((sessionKey: string) => void) | undefined;
  /** Told about a resting session's actor that failed to start after its message was acknowledged. */
  readonly onError?: ((error: unknown) => void) | undefined;
  readonly sessions: Map<string, LiveSession>;
  /** Runs a crash left `running` that the next hydrate of their session resumes, by session key. */
  readonly resuming: Map<string, CutRuns>;
  /** Every way into the sessions, in call order. */
  readonly doors: SessionDoors;
  /** Start a resting session's actor after the acknowledgements in progress (session-door.ts). */
  readonly startLater: (session: RestingSession) => void;
}

/**
 * The runs a crash cut in one session: an agent run, and a plan run (a plan can have been handed to the session
 * while an agent run was active, so both can be open at a crash).
 */
export interface CutRuns {
  readonly agent?: RunRecord;
  readonly plan?: RunRecord;
}

/** Hydrate the session from the ledger (or create it) and start its actor. */
export async function loadSession(registry: RegistryState, key: string): Promise<LiveSession> {
  try {
    const state = await withWaitingRun(registry.ledger, key, await loadSessionState(registry.ledger, key));
    const plan = await pausedPlanToRestore(registry.ledger, key, state);
    const live = registry.sessions.get(key);
    if (live !== undefined) return live;
    const { agent: resume, plan: cut } = registry.resuming.get(key) ?? {};
    registry.resuming.delete(key);
    // A plan run a crash cut holds its session again as running (its messages keep queuing) until it is resumed
    // and ends: pending messages must not start a run ahead of it, nor beside it. An agent run cut with it resumes
    // first.
    if (cut !== undefined) {
      const held = { runId: cut.runId, state: 'running' as const, steps: [] };
      return startOrRefuse(registry, key, { ...state, plan: held, resume });
    }
    return startOrRefuse(registry, key, { ...state, plan, resume });
  } catch (error) {
    if (isRuntimeError(error, 'ledger_corrupt')) registry.onCorrupt?.(error);
    throw error;
  }
}

function start(registry: RegistryState, key: string, state: HydrateState): LiveSession {
  const { machine, clock, defaults, sessions } = registry;
  const { record } = state;
  const restored = restorable(key, record?.snapshot, state, defaults, clock.now());
  // The machine's context holds the session's settings; the row's columns are where they are stored.
  const settings = settingsOf(record);
  const snapshot = restored === undefined ? undefined : snapshotWithSettings(restored, settings);
  const input = { sessionKey: key, settings };
  const create = (): SessionActor =>
    snapshot === undefined
      ? createSessionActor(machine, { input, clock })
      : createSessionActor(machine, { input, clock, snapshot });
  const epoch = (record?.epoch ?? 0) + 1;
  const lastSeq = Math.max(record?.lastSeq ?? 0, state.lastSeq);
  // A session at rest makes its actor when something needs it: a message is admitted on its context first.
  const resting = restingContext(key, snapshot, settings);
  if (resting !== undefined) {
    const session = new RestingSession(key, epoch, lastSeq, resting, create, registry.startLater);
    sessions.set(key, session);
    registry.onIdle?.(key);
    return session;
  }
  const actor = create();
  const session: LiveSession = { key, actor, epoch, lastSeq };
  sessions.set(key, session);
  actor.start();
  // XState neither restores delayed transitions nor runs entry actions: re-arm the drain timer from the stored
  // deadline (HYDRATED re-checks the session); a session that rests idle with nothing queued has nothing to re-arm
  // and is only marked idle for the sweeper, as entering idle marks it (a step less for each cold session).
  if (snapshot !== undefined) {
    if (restsIdle(actor.getSnapshot())) registry.onIdle?.(key);
    else actor.send({ type: 'HYDRATED' });
  }
  return session;
}

/** True when a restored session rests in idle.empty with nothing queued and no plan held: nothing to re-check. */
function restsIdle(snapshot: ReturnType<SessionActor['getSnapshot']>): boolean {
  const { queue, plans } = snapshot.context;
  return snapshot.matches({ idle: 'empty' }) && queue.length === 0 && (plans ?? []).length === 0;
}

/** Start the session's actor; a record it cannot restore from fails only this session (`restoreFailure`). */
function startOrRefuse(registry: RegistryState, key: string, state: HydrateState): LiveSession {
  try {
    return start(registry, key, state);
  } catch (error) {
    const started = registry.sessions.get(key);
    if (started !== undefined) stopSession(started.actor);
    registry.sessions.delete(key);
    throw restoreFailure(key, error);
  }
}

/**
 * The session's state with the paused run the actor must hold. The ledger names the latest paused run; when
 * that is a plan (it waits through approvePlan, not through the actor), an older paused agent run still
 * waiting for calls is the one restored, so its approval is never hidden behind the plan.
 */
async function withWaitingRun(ledger: Ledger, key: string, state: SessionState): Promise<SessionState> {
  if (state.paused === undefined || state.paused.calls.some((call) => call.kind !== 'ran')) return state;
  const paused = (await ledger.listPausedRuns()).filter(
    (run) => run.sessionKey === key && run.runId !== state.paused?.run.runId,
  );
  for (const run of paused.reverse()) {
    const calls = await ledger.listToolCalls(run.runId);
    const turn = calls.at(-1)?.turn;
    const batch = calls.filter((call) => call.turn === turn);
    if (batch.some((call) => call.kind !== 'ran')) return { ...state, paused: { run, calls: batch } };
  }
  return state;
}

interface PersistedSessionSnapshot {
  value: unknown;
  context: SessionContext;
  children?: unknown;
}

function isIdleValue(value: unknown): boolean {
  return value === 'idle' || (typeof value === 'object' && value !== null && 'idle' in value);
}

/**
 * The snapshot to restore. A snapshot saved while a run was active (the process stopped mid-run) comes back
 * idle: that run is gone and its messages count as consumed. What is still queued comes from the inbox
 * (reconcileContext), so a snapshot older than the inbox loses nothing.
 */
export function restorable(
  key: string,
  saved: unknown,
  state: HydrateState,
  defaults: ReconcileDefaults,
  now: number,
): Snapshot<unknown> | undefined {
  if (saved === undefined && state.pending.length === 0 && state.lastOrder === 0) return undefined;
  const persisted = (saved ?? {
    status: 'active',
    value: { idle: 'empty' },
    historyValue: {},
    children: {},
  }) as PersistedSessionSnapshot;
  if (
    typeof persisted !== 'object' ||
    persisted === null ||
    (saved !== undefined && typeof persisted.context !== 'object')
  ) {
    throw new RuntimeError(
      'ledger_corrupt',
      `sessions row "${key}": the snapshot is not a session snapshot`,
      {
        details: { table: 'sessions', row: `"${key}"`, sessionKey: key },
      },
    );
  }
  const reconciled = reconcileContext(
    key,
    saved === undefined ? undefined : persisted.context,
    state,
    defaults,
    now,
  );
  // A paused plan run holds the session again (idle.check takes it to held): messages keep queuing.
  const context = state.plan === undefined ? reconciled : { ...reconciled, plans: [state.plan] };
  // A paused plan run has no recorded tool calls: it resumes through approvePlan, not through the session actor.
  if (state.paused !== undefined && state.paused.calls.some((call) => call.kind !== 'ran')) {
    // The ledger knows the pause; the snapshot may be older (a crash before it was written).
    const paused = withPause(context, state.paused, persisted.context?.pause ?? null, defaults, now);
    return {
      ...persisted,
      value: paused.pause?.state ?? 'awaiting_approval',
      children: {},
      context: paused,
    } as unknown as Snapshot<unknown>;
  }
  if (state.resume !== undefined) {
    // A run a crash cut comes back as a pause that waits for nothing: the session resumes it at once.
    const resumed = withResumedRun(context, state.resume, defaults, now);
    const value = 'awaiting_tool_results';
    return { ...persisted, value, children: {}, context: resumed } as unknown as Snapshot<unknown>;
  }
  const value =
    isIdleValue(persisted.value) && context.queue.length === 0 ? persisted.value : { idle: 'check' };
  return { ...persisted, value, children: {}, context } as unknown as Snapshot<unknown>;
}

/** The context of a session whose run a crash cut: the run back in place, waiting for nothing. */
function withResumedRun(
  context: SessionContext,
  run: RunRecord,
  defaults: ReconcileDefaults,
  now: number,
): SessionContext {
  return {
    ...context,
    run: restoredRun(run),
    pause: { state: 'awaiting_tool_results', calls: [], until: now + defaults.pauseTimeoutMs },
  };
}

/** A recorded run back in the session's context: its messages consumed, its queue items gone with them. */
function restoredRun(run: RunRecord): NonNullable<SessionContext['run']> {
  return {
    runId: run.runId,
    prompt: '',
    messageIds: run.messageIds,
    consumedAs: 'consumed',
    startedAt: run.startedAt,
    items: [],
  };
}

/** The context of a session whose run is paused: the run back in place, and what it waits for. */
function withPause(
  context: SessionContext,
  paused: NonNullable<SessionState['paused']>,
  saved: PauseContext | null,
  defaults: ReconcileDefaults,
  now: number,
): SessionContext {
  const { run, calls } = paused;
  const waiting = calls.filter((call) => call.kind !== 'ran');
  return {
    ...context,
    run: restoredRun(run),
    pause: {
      state: waiting.some((call) => call.kind !== 'deferred' && call.status === 'pending')
        ? 'awaiting_approval'
        : 'awaiting_tool_results',
      calls: waiting.map((call) => ({
        toolCallId: call.toolCallId,
        approvalId: approvalIdOfCall(call),
        tool: call.tool,
        needs: call.kind === 'deferred' ? 'deferred' : 'approval',
        ...(call.kind === 'in_doubt' ? { inDoubt: true } : {}),
        turn: call.turn,
        position: call.position,
        settled: call.status !== 'pending',
      })),
      until: saved?.until ?? now + defaults.pauseTimeoutMs,
    },
  };
}

/** Drain timing for messages the snapshot did not know (accepted after it was taken). */
export interface ReconcileDefaults {
  readonly debounceMs: number;
  readonly maxWaitMs: number;
  /** How long a paused run waits when the snapshot did not record its deadline. */
  readonly pauseTimeoutMs: number;
  /** Whether the model sees who said what (the `authority` option's attribution). @default false */
  readonly attribution?: boolean;
}

function itemOf(record: InboxRecord, defaults: ReconcileDefaults): QueuedMessage {
  return {
    messageId: record.messageId,
    text: record.text,
    mode: record.mode === 'collect' ? 'collect' : 'followup',
    enqueuedAt: record.acceptedAt,
    debounceMs: defaults.debounceMs,
    maxWaitMs: defaults.maxWaitMs,
    ...(record.senderId === undefined ? {} : { senderId: record.senderId }),
    ...(record.senderName === undefined ? {} : { senderName: record.senderName }),
    // The message's own authority, as it was admitted (a run never gets more than its messages had).
    ...(record.senderRole === undefined ? {} : { role: record.senderRole }),
    ...(defaults.attribution === true && record.senderRole !== undefined ? { attribute: true } : {}),
    ...(record.channel === undefined ? {} : { channel: record.channel }),
    ...(record.thread === undefined ? {} : { thread: record.thread }),
    ...(record.parts === undefined ? {} : { parts: record.parts }),
  };
}

/** The dedupe window from the snapshot and the inbox's latest ids together: the newest time per id, in time order. */
function mergeSeen(
  saved: readonly SeenMessage[],
  recent: readonly SeenMessage[],
  now: number,
): SeenMessage[] {
  const latest = new Map<string, number>();
  for (const [id, at] of [...saved, ...recent]) latest.set(id, Math.max(at, latest.get(id) ?? at));
  return [...latest]
    .filter(([, at]) => now - at < dedupeWindowMs)
    .sort((a, b) => a[1] - b[1])
    .slice(-dedupeMaxIds);
}

/**
 * The context a session resumes with. The inbox is the truth about what is still to run: the snapshot may
 * lag behind it (a crash between accepting a message and persisting the session). Queued messages keep their
 * snapshot entry (mode, timing) when there is one and take the inbox's arrival order; a message only the inbox
 * knows is queued with the defaults. The dedupe window also takes the inbox's latest ids. Numbering continues after what the ledger recorded. A queue the snapshot
 * had no deadline for drains at once.
 */
export function reconcileContext(
  sessionKey: string,
  saved: SessionContext | undefined,
  state: SessionState,
  defaults: ReconcileDefaults,
  now: number,
): SessionContext {
  const base = saved ?? initialSessionContext(sessionKey);
  const known = new Map(base.queue.map((item) => [item.messageId, item]));
  const queue = state.pending.map((record) => known.get(record.messageId) ?? itemOf(record, defaults));
  const interrupting = queue.filter((item) => item.mode === 'interrupt');
  const ordered =
    interrupting.length === 0
      ? queue
      : [...interrupting, ...queue.filter((item) => item.mode !== 'interrupt')];
  const drainAt = ordered.length === 0 ? null : (base.drainAt ?? now);
  return {
    ...base,
    seen: mergeSeen(base.seen, state.recent, now),
    queue: ordered,
    run: null,
    pause: null,
    plans: [],
    // Plan runs and undos handed to the session and not started died with their callers: their jobs were in the
    // process that saved this snapshot (a crash-cut plan is resumed by startup recovery, not from here).
    work: [],
    nextOrder: Math.max(base.nextOrder, state.lastOrder + 1),
    drainAt,
  };
}

/**
 * What hydrating a session threw, as the caller sees it: a session whose stored record cannot be restored (a
 * snapshot of the wrong shape throws a TypeError deep in the machine) is `ledger_corrupt` naming its sessions row.
 */
export function restoreFailure(sessionKey: string, error: unknown): RuntimeError {
  if (isRuntimeError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RuntimeError(
    'ledger_corrupt',
    `sessions row "${sessionKey}": cannot restore the session (${reason})`,
    {
      cause: error,
      details: { table: 'sessions', row: `"${sessionKey}"`, sessionKey },
    },
  );
}

/** Tracks when sessions went idle and reports those idle for `idleMs`, with one timer for all of them. */
export interface IdleSweeper {
  /** The session just went idle (nothing running, nothing queued). */
  markIdle(key: string): void;
  stop(): void;
}

/**
 * Create the sweeper. Sessions go idle in time order, so a FIFO of `[key, idleSince]` with one timer armed for
 * its head replaces a timer per session (none to schedule and cancel on every run). A session marked idle again
 * later makes its older entry stale; `onDue` re-checks that the session is still idle.
 */
export function createIdleSweeper(options: {
  clock: Clock;
  idleMs: number;
  onDue: (key: string) => void;
}): IdleSweeper {
  const { clock, idleMs, onDue } = options;
  const idleSince = new Map<string, number>();
  let queue: [string, number][] = [];
  let head = 0;
  let armed = false;
  let timer: TimerHandle;

  const arm = (): void => {
    const next = queue[head];
    if (next === undefined || armed) return;
    armed = true;
    timer = clock.setTimeout(sweep, Math.max(0, next[1] + idleMs - clock.now()));
  };

  function sweep(): void {
    armed = false;
    const now = clock.now();
    for (let entry = queue[head]; entry !== undefined && entry[1] + idleMs <= now; entry = queue[++head]) {
      const [key, at] = entry;
      if (idleSince.get(key) !== at) continue;
      idleSince.delete(key);
      onDue(key);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    arm();
  }

  return {
    markIdle(key) {
      const at = clock.now();
      idleSince.set(key, at);
      queue.push([key, at]);
      arm();
    },
    stop() {
      if (armed) clock.clearTimeout(timer);
      armed = false;
      queue = [];
      head = 0;
      idleSince.clear();
    },
  };
}
