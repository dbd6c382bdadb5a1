import type { SessionRegistry } from './session-registry.js';
import { type Clock, createDeferred } from '../core/index.js';
import type { Ledger, RunRecord } from '../ledger/index.js';
import { subagentDepth } from '../policies/index.js';
import {
  closeCrashedRuns,
  defaultRecoveryPolicy,
  recoverOpenRuns,
  type RecoveryPolicy,
  resumeCrashedPlan,
} from '../runner/index.js';
import type { EventBus } from '../events/index.js';
import { sessionScopeOf, type RuntimeInternals } from './runtime-internals.js';

/**
 * Cancel the tasks of subagent sessions that never started: the parent run waiting for them crashed (and was closed
 * `crashed` above), so nobody would read their answer.
 */
async function cancelOrphans(ledger: Ledger, keys: readonly string[], onError: (error: unknown) => void) {
  for (const key of keys) {
    try {
      const { pending } = await ledger.loadSession(key);
      const ids = pending.map((message) => message.messageId);
      await ledger.updateMessages(key, ids, { status: 'cancelled' });
    } catch (error) {
      onError(error);
    }
  }
}

/**
 * Startup recovery. Runs a crash left open resume from their last durable boundary (`run.resumed`; their
 * sessions hold them when hydrated), or, with `recovery.crashedRuns: 'close'`, past their resumes or their age,
 * are closed as `crashed` with the text they had streamed and a `run.ended` event, written in one synchronous
 * stretch so they commit together (a crash during recovery leaves the run open for the next start, never closed
 * without its event); their messages count as consumed. Then every session with a resumed run, messages still to
 * run or a paused run is hydrated, which queues them in their original order and drains; then a resumed plan run
 * goes on in its session (`resumeCrashedPlan`). Whatever cannot be read (a corrupt row) is reported and skipped:
 * the other sessions are served.
 */
export async function recoverAtStart(
  deps: {
    ledger: Ledger;
    clock: Clock;
    bus: EventBus;
    registry: SessionRegistry;
    onError: (error: unknown) => void;
    /** Subagents are enabled: a child session's pending task lost its parent and is cancelled, not run. */
    subagents?: boolean;
    /** What becomes of runs left open. @default resume, at most twice, runs younger than a day */
    recovery?: RecoveryPolicy;
  },
  /** The runtime's internals, to run resumed plan runs on. @default none: plan runs a crash cut close `crashed` */
  internals?: { get(): RuntimeInternals },
): Promise<void> {
  const { ledger, bus, registry, onError } = deps;
  bus.seek(await ledger.lastCursor());
  const recovered = await recoverOpenRuns(
    { ledger, clock: deps.clock, events: bus, onError },
    {
      policy: deps.recovery ?? defaultRecoveryPolicy,
      reason: 'crash',
      resumePlans: internals !== undefined,
    },
  );
  const plans = recovered.resumed.filter((run) => run.provider === 'plan');
  // Each resumed run's session hydrates holding it (a plan run: held as running until resumePlans runs it on).
  for (const run of recovered.resumed) registry.resumeOnLoad(run);
  const crashed = recovered.sessions;
  const withPending = await ledger.listSessionsWithPending().catch((error: unknown) => {
    onError(error);
    return [] as string[];
  });
  // A child whose run resumes is not an orphan: its run goes on (under its parent's spawn call).
  const resumedKeys = new Set(recovered.resumed.map((run) => run.sessionKey));
  const orphans =
    deps.subagents === true
      ? withPending.filter((key) => subagentDepth(key) > 0 && !resumedKeys.has(key))
      : [];
  await cancelOrphans(ledger, orphans, onError);
  const pending = withPending.filter((key) => !orphans.includes(key));
  // Paused runs come back paused (their expiry timers re-armed); they are not crashed.
  const paused = await ledger.listPausedRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  for (const key of new Set([...crashed, ...pending, ...paused.map((run) => run.sessionKey)])) {
    try {
      await registry.acquire(key);
    } catch (error) {
      onError(error);
    }
  }
  if (internals !== undefined) await resumePlans(internals.get(), plans, onError);
}

/**
 * Run on each plan run a crash cut, in its session (hydrated above): each holds its session and is in its lane
 * before recovery ends, ahead of any plan or message sent after the restart. A failure is reported, never thrown.
 */
async function resumePlans(
  internals: RuntimeInternals,
  runs: readonly RunRecord[],
  onError: (error: unknown) => void,
): Promise<void> {
  for (const run of runs) {
    try {
      const session = await internals.registry.acquire(run.sessionKey);
      resumeCrashedPlan(sessionScopeOf(internals, session), run).catch(onError);
    } catch (error) {
      onError(error);
    }
  }
}

/**
 * Reconcile after a ledger fault, as a restart of the sessions that were live reconciles them: their actors are
 * stopped (no run of theirs can start or write after this, and an `acquire` of them waits), the runs the fault
 * stopped settle, the runs the ledger still holds open for them are closed as `crashed` with the text that was
 * recorded (as at startup), and each session hydrates from the inbox: its pending messages queue again in their
 * order and run once; consumed ones do not run again. The actors are stopped in the synchronous part.
 */
export function reconcileAfterFault(deps: {
  ledger: Ledger;
  clock: Clock;
  bus: EventBus;
  registry: SessionRegistry;
  onError: (error: unknown) => void;
  /** Resolves once every run the fault stopped settled. */
  runsSettled: () => Promise<void>;
}): Promise<void> {
  const { registry, onError } = deps;
  const rebuilt = createDeferred<void>();
  const keys = registry.suspendAll(rebuilt.promise);
  const work = async (): Promise<void> => {
    try {
      await deps.runsSettled();
      await deps.bus.flushed();
      await closeCrashedRuns(
        { ledger: deps.ledger, clock: deps.clock, events: deps.bus, onError },
        new Set(keys),
      );
    } finally {
      rebuilt.resolve();
    }
    for (const key of keys) {
      try {
        await registry.acquire(key);
      } catch (error) {
        onError(error);
      }
    }
  };
  return work();
}
