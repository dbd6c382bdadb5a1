import { heldPlans, pausedPlanOf } from './session-pause.js';
import { RuntimeError, storableTextProblem } from '../core/index.js';
import { isRunActive } from '../policies/index.js';
import { endHeldPlan } from '../runner/index.js';
import { sessionControlOf, type RuntimeInternals } from './runtime-internals.js';
import { activityOf, stateOf, type SessionState } from './session-machine.js';

/** What `status()` reports. */
export interface SessionStatus {
  readonly state: SessionState;
  readonly runId?: string;
  readonly queued: number;
}

/**
 * Abort what session `key` runs: a paused plan (resolves once recorded), or its active run of any kind (an agent
 * run, a plan run, an undo) through its machine. Resolves true when something was aborted.
 */
export function abortSession(internals: RuntimeInternals, key: string, reason: unknown): Promise<boolean> {
  if (typeof reason !== 'string') {
    return Promise.reject(new RuntimeError('invalid_input', 'abort: reason must be a string'));
  }
  const problem = storableTextProblem(reason);
  if (problem !== undefined)
    return Promise.reject(new RuntimeError('invalid_input', `abort: reason ${problem}`));
  const live = internals.registry.live(key);
  if (live === undefined) return Promise.resolve(false);
  const snapshot = live.actor.getSnapshot();
  // A plan run or an undo running beside a paused plan is the machine's run: the abort reaches it too.
  const running = snapshot.value === 'running';
  // A paused plan holds the session like a paused run: abort ends it (resolves once recorded).
  const paused = pausedPlanOf(snapshot.context);
  if (paused !== undefined) {
    if (running) live.actor.send({ type: 'ABORT', status: 'aborted', reason });
    const ended = { sessionKey: key, runId: paused.runId, status: 'aborted' as const, reason };
    const control = sessionControlOf(internals, live);
    return endHeldPlan(internals.services, internals.work, control, ended).then(() => true);
  }
  if (!isRunActive(activityOf(snapshot))) return Promise.resolve(false);
  live.actor.send({ type: 'ABORT', status: 'aborted', reason });
  return Promise.resolve(true);
}

/** Where session `key` stands: idle when it is not live. */
export function sessionStatus(internals: RuntimeInternals, key: string): SessionStatus {
  const live = internals.registry.live(key);
  if (live === undefined) return { state: 'idle', queued: 0 };
  const snapshot = live.actor.getSnapshot();
  const activity = activityOf(snapshot);
  // A plan run the session holds (paused first) is its run when no agent run is.
  const { context } = snapshot;
  const runId = context.run?.runId ?? (pausedPlanOf(context) ?? heldPlans(context)[0])?.runId;
  return {
    state: stateOf(activity),
    queued: context.queue.length,
    ...(runId === undefined ? {} : { runId }),
  };
}
