import type { Snapshot } from 'xstate';
import { RuntimeError } from '../core/index.js';
import type { RunRecord, SessionState } from '../ledger/index.js';
import { reconcileContext, type ReconcileDefaults } from './session-reconcile.js';
import type { PauseContext, SessionContext } from './session-context.js';
import type { HydrateState } from './session-plan-restore.js';

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
