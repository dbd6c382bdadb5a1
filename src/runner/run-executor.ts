import { RuntimeError } from '../core/index.js';
import type { LaneWaitInfo } from '../lanes/index.js';
import { endRunBeforeStart, executeRunInLane } from './execute-run.js';
import type { ExecuteRun } from './run-request.js';
import { openRunScope, type RunScope } from './run-scope.js';
import type { RunServices } from './run-services.js';
import type { RunResult } from './run-summary.js';

/**
 * Build the function a session executes its runs with: `sessionLane(key) -> globalLane -> turn loop`, with the
 * run opened, its messages marked consumed, its turns and its end or pause recorded in the ledger.
 */
export function createRunExecutor(services: RunServices): ExecuteRun {
  return async (request, port) => {
    // The machine starts a run from inside its step (xstate runs actions there): begin once that step is done, so
    // what the run reads of its session (its port, its tools) sees the snapshot that holds the run.
    await Promise.resolve();
    const scope = openRunScope(services, request, port);
    // A paused run aborted or interrupted meanwhile only ends; it needs no lane, and it ends even while closing.
    if (request.run.resume !== undefined && request.signal.aborted) return endRunBeforeStart(scope);
    if (!services.accepting()) throw new RuntimeError('runtime_closed', 'the runtime is closing');
    return runInLanes(scope);
  };
}

/**
 * Queue the run in its session's lane, then the global lane (a subagent's run: the subagent lane). Aborted while
 * still waiting there, the run never reached the model: it ends now, and the lane task that would have run it
 * returns at once when its turn comes (one listener per run, instead of wiring the signal through both lanes).
 */
function runInLanes(scope: RunScope): Promise<RunResult> {
  const { services, request, port } = scope;
  const { signal, run } = request;
  const provider = services.candidates[0].providerName;
  const onWaited = (info: LaneWaitInfo): void =>
    port.emit({ type: 'lane.waited', runId: run.runId, ...info });
  return new Promise<RunResult>((resolve, reject) => {
    let started = false;
    let settled = false;
    const settle = (finish: () => void): void => {
      if (settled) return;
      settled = true;
      finish();
    };
    signal.addEventListener('abort', () => !started && settle(() => resolve(endRunBeforeStart(scope))), {
      once: true,
    });
    const task = (): Promise<RunResult | undefined> => {
      started = true;
      return signal.aborted ? Promise.resolve(undefined) : executeRunInLane(scope);
    };
    // A subagent's run takes the subagent lane: its parent may hold a global slot while it waits for the child.
    const spawned = services.subagents.parentOf(request.sessionKey) !== undefined;
    const inLane = () =>
      spawned ? services.subagents.lane.run(task) : services.globalLane.run(task, { provider, onWaited });
    services.sessionLane.run(request.sessionKey, inLane).then(
      (result) => settle(() => resolve(result ?? endRunBeforeStart(scope))),
      (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}
