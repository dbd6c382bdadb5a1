import { createActor, type Snapshot } from 'xstate';
import type { Clock } from '../core/clock.js';
import { isRuntimeError, RuntimeError } from '../core/errors.js';
import type { Ledger, SessionRecord, SessionState } from '../ledger/ledger.js';
import { restoreFailure } from './restore-failure.js';
import { reconcileContext, type ReconcileDefaults } from './session-reconcile.js';
import type { PauseContext, SessionContext } from './session-context.js';
import { pausedPlanToRestore, type HydrateState } from './session-plan-restore.js';
import type { SessionActor, SessionMachine } from './session-machine.js';
import { stopSession } from './session-stop.js';
import { recordOf as rowOf, settingsOf, snapshotWithSettings } from './session-record.js';

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
  /** Write a live session's record (override, snapshot, epoch, seq). */
  persist(session: LiveSession): Promise<void>;
  /** Stop an idle session's actor, keeping its snapshot in the ledger. False when it is not idle. */
  hibernate(key: string): Promise<boolean>;
  /** Persist and stop every live session. */
  stopAll(): Promise<void>;
  readonly size: number;
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
function restorable(
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
  const value =
    isIdleValue(persisted.value) && context.queue.length === 0 ? persisted.value : { idle: 'check' };
  return { ...persisted, value, children: {}, context } as unknown as Snapshot<unknown>;
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
    run: {
      runId: run.runId,
      prompt: '',
      messageIds: run.messageIds,
      consumedAs: 'consumed',
      startedAt: run.startedAt,
      items: [],
    },
    pause: {
      state: waiting.some((call) => call.kind === 'approval' && call.status === 'pending')
        ? 'awaiting_approval'
        : 'awaiting_tool_results',
      calls: waiting.map((call) => ({
        toolCallId: call.toolCallId,
        tool: call.tool,
        needs: call.kind === 'approval' ? 'approval' : 'deferred',
        turn: call.turn,
        position: call.position,
        settled: call.status !== 'pending',
      })),
      until: saved?.until ?? now + defaults.pauseTimeoutMs,
    },
  };
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
  const { machine, ledger, clock, defaults } = options;
  const sessions = new Map<string, LiveSession>();
  const loading = new Map<string, Promise<LiveSession>>();

  function start(key: string, state: HydrateState): LiveSession {
    const { record } = state;
    const restored = restorable(key, record?.snapshot, state, defaults, clock.now());
    // The machine's context holds the session's settings; the row's columns are where they are stored.
    const settings = settingsOf(record);
    const snapshot = restored === undefined ? undefined : snapshotWithSettings(restored, settings);
    const actor =
      snapshot === undefined
        ? createActor(machine, { input: { sessionKey: key, settings }, clock })
        : createActor(machine, { input: { sessionKey: key, settings }, clock, snapshot });
    const session: LiveSession = {
      key,
      actor,
      epoch: (record?.epoch ?? 0) + 1,
      lastSeq: Math.max(record?.lastSeq ?? 0, state.lastSeq),
      admitting: undefined,
    };
    sessions.set(key, session);
    actor.start();
    // XState does not restore delayed transitions: re-arm the drain timer from the stored deadline.
    if (snapshot !== undefined) actor.send({ type: 'HYDRATED' });
    return session;
  }

  async function load(key: string): Promise<LiveSession> {
    try {
      const state = await withWaitingRun(key, await ledger.loadSession(key));
      const plan = await pausedPlanToRestore(ledger, key, state);
      return sessions.get(key) ?? startOrRefuse(key, { ...state, plan });
    } catch (error) {
      if (isRuntimeError(error, 'ledger_corrupt')) options.onCorrupt?.(error);
      throw error;
    }
  }

  /** Start the session's actor; a record it cannot restore from fails only this session (`restoreFailure`). */
  function startOrRefuse(key: string, state: HydrateState): LiveSession {
    try {
      return start(key, state);
    } catch (error) {
      const started = sessions.get(key);
      if (started !== undefined) stopSession(started.actor);
      sessions.delete(key);
      throw restoreFailure(key, error);
    }
  }

  /**
   * The session's state with the paused run the actor must hold. The ledger names the latest paused run; when
   * that is a plan (it waits through approvePlan, not through the actor), an older paused agent run still
   * waiting for calls is the one restored, so its approval is never hidden behind the plan.
   */
  async function withWaitingRun(key: string, state: SessionState): Promise<SessionState> {
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

  const recordOf = (session: LiveSession): SessionRecord => rowOf(session, clock.now());

  return {
    live: (key) => sessions.get(key),
    all: () => [...sessions.values()],
    acquire(key) {
      const live = sessions.get(key);
      if (live !== undefined) return Promise.resolve(live);
      let pending = loading.get(key);
      if (pending === undefined) {
        pending = load(key).finally(() => loading.delete(key));
        loading.set(key, pending);
      }
      return pending;
    },
    persist: (session) => ledger.putSession(recordOf(session)),
    async hibernate(key) {
      const session = sessions.get(key);
      if (session === undefined || !session.actor.getSnapshot().matches({ idle: 'empty' })) return false;
      // A message being written is not applied yet: the session only looks idle.
      if (session.admitting !== undefined) return false;
      // Write first, then forget: a later hydrate reads what this wrote (the ledger orders reads after writes).
      const written = ledger.putSession(recordOf(session));
      sessions.delete(key);
      stopSession(session.actor);
      await written;
      return true;
    },
    async stopAll() {
      // Admissions writing their record apply before the snapshot is taken.
      await Promise.all(
        [...sessions.values()].flatMap((session) =>
          session.admitting === undefined ? [] : [session.admitting],
        ),
      );
      const all = [...sessions.values()];
      const writes = all.map((session) => ledger.putSession(recordOf(session)));
      for (const session of all) {
        sessions.delete(session.key);
        stopSession(session.actor);
      }
      await Promise.all(writes);
    },
    get size() {
      return sessions.size;
    },
  };
}
