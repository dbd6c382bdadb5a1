import { createActor } from 'xstate';
import type { Clock } from '../core/index.js';
import { isRuntimeError, type RuntimeError } from '../core/index.js';
import type { Ledger, RunRecord, SessionState } from '../ledger/index.js';
import { restoreFailure } from './restore-failure.js';
import type { ReconcileDefaults } from './session-reconcile.js';
import { pausedPlanToRestore, type HydrateState } from './session-plan-restore.js';
import type { SessionMachine } from './session-machine.js';
import type { LiveSession } from './session-registry.js';
import { settingsOf, snapshotWithSettings } from './session-record.js';
import { restorable } from './session-restore-snapshot.js';
import { stopSession } from './session-stop.js';

/** What the session registry's helpers share: its dependencies and the sessions live in this process. */
export interface RegistryState {
  readonly machine: SessionMachine;
  readonly ledger: Ledger;
  readonly clock: Clock;
  /** Drain timing for queued messages the snapshot did not know. */
  readonly defaults: ReconcileDefaults;
  /** Told about a session that cannot be hydrated because a row of it is corrupt (before its caller is). */
  readonly onCorrupt?: ((error: RuntimeError) => void) | undefined;
  readonly sessions: Map<string, LiveSession>;
  /** Runs a crash left `running` that the next hydrate of their session resumes, by session key. */
  readonly resuming: Map<string, RunRecord>;
}

/** Hydrate the session from the ledger (or create it) and start its actor. */
export async function loadSession(registry: RegistryState, key: string): Promise<LiveSession> {
  try {
    const state = await withWaitingRun(registry.ledger, key, await registry.ledger.loadSession(key));
    const plan = await pausedPlanToRestore(registry.ledger, key, state);
    const live = registry.sessions.get(key);
    if (live !== undefined) return live;
    const resume = registry.resuming.get(key);
    registry.resuming.delete(key);
    // A plan run a crash cut holds its session again as running (its messages keep queuing) until it is resumed
    // and ends: pending messages must not start a run ahead of it, nor beside it.
    if (resume?.provider === 'plan') {
      const held = { runId: resume.runId, state: 'running' as const, steps: [] };
      return startOrRefuse(registry, key, { ...state, plan: held });
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
