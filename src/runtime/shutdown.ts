import { RuntimeError } from '../core/index.js';
import { isRunActive } from '../policies/index.js';
import { finishRunWork } from '../runner/index.js';
import type { RuntimeInternals } from '../actors/index.js';
import { activityOf } from '../actors/index.js';
import { runtimeStreamsOf } from '../events/index.js';
import { waitForRun } from '../actors/index.js';

/** What closing releases after the work settled, in order. */
export interface ShutdownSteps {
  readonly stopTimers: () => void;
  readonly closeLanes: () => Promise<void>;
  readonly markClosed: () => void;
  readonly releaseLedger: () => Promise<void>;
}

/** Let active runs finish (aborting those still running after `timeoutMs`); paused runs stay paused. */
async function finishActiveRuns(internals: RuntimeInternals, timeoutMs: number): Promise<void> {
  // Paused runs stay paused: the ledger keeps them, and the next start brings them back.
  const active = internals.registry.all().filter((live) => {
    const activity = activityOf(live.actor.getSnapshot());
    return isRunActive(activity) && activity !== 'awaiting_approval' && activity !== 'awaiting_tool_results';
  });
  await Promise.all(
    active.map(async (live) => {
      const result = await waitForRun(internals, live, timeoutMs);
      if (result.status !== 'timeout') return;
      live.actor.send({ type: 'ABORT', status: 'aborted', reason: 'the runtime is closing' });
      await waitForRun(internals, live, timeoutMs);
    }),
  );
}

/**
 * Close began: durable consumers' event streams yield nothing more (called as `close()` is, before anything
 * settles, so no event reaches a consumer loop once close began).
 */
export function beginShutdown(internals: Pick<RuntimeInternals, 'closed'>): void {
  runtimeStreamsOf(internals.closed).beginClose();
}

/**
 * Settle runs, plan runs and undos, and the consumer loops handling an event (their positions stored), stop every
 * session, then release lanes, bus and ledger.
 */
export async function shutdown(
  internals: RuntimeInternals,
  steps: ShutdownSteps,
  timeoutMs: number,
): Promise<void> {
  beginShutdown(internals);
  await Promise.all([
    finishActiveRuns(internals, timeoutMs),
    runtimeStreamsOf(internals.closed).settled(internals.services.clock, timeoutMs),
  ]);
  await finishRunWork(internals.services, internals.work, timeoutMs);
  steps.stopTimers();
  await internals.registry.stopAll();
  // A plan run or an undo still waiting for its session's run never starts now.
  internals.work.jobs.failAll(new RuntimeError('runtime_closed', 'the runtime closed before it could start'));
  await steps.closeLanes();
  steps.markClosed();
  await internals.bus.flushed();
  await steps.releaseLedger();
}
