import { RuntimeError } from '../core/index.js';
import type { LaneWaitInfo } from '../lanes/index.js';
import { endRunBeforeStart, executeRunInLane } from './execute-run.js';
import type { RunJob } from './run-jobs.js';
import type { ExecuteRun, RunRequest } from './run-request.js';
import { openRunScope, type RunScope } from './run-scope.js';
import type { RunServices } from './run-services.js';
import type { RunResult } from './run-summary.js';

/**
 * Build the one entry a session machine starts every run kind through. An agent run goes
 * `globalLane -> turn loop`, opened, its messages marked consumed, its turns and its end or pause recorded; a plan
 * run or an undo runs the job its caller handed the session (`jobFor`). The machine runs one run of a session at
 * a time, so no session lane is needed.
 */
export function createRunExecutor(
  services: RunServices,
  jobFor: (request: RunRequest) => RunJob | undefined,
): ExecuteRun {
  const agent = createAgentExecutor(services);
  return (request, port) => {
    const kind = request.run.kind ?? 'agent';
    return kind === 'agent' ? agent(request, port) : runJob(jobFor, request);
  };
}

/** Run a plan run's or an undo's job; one that is gone (a session restored with work its caller lost) never starts. */
function runJob(jobFor: (request: RunRequest) => RunJob | undefined, request: RunRequest) {
  const { run } = request;
  const job = jobFor(request);
  if (job === undefined) {
    const error = new RuntimeError('internal', `the ${run.kind ?? 'agent'} run "${run.runId}" has no job`);
    return Promise.reject(error);
  }
  return job.run(request);
}

/** The executor of agent runs. */
function createAgentExecutor(services: RunServices): ExecuteRun {
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
 * Queue the run in the global lane (a subagent's run: the subagent lane). Aborted while still waiting there, the run never reached the model: it ends now, and the lane task that would have run it
 * returns at once when its turn comes (one listener per run, instead of wiring the signal through the lane).
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
    const inLane = spawned
      ? services.subagents.lane.run(task)
      : services.globalLane.run(task, { provider, onWaited });
    inLane.then(
      (result) => settle(() => resolve(result ?? endRunBeforeStart(scope))),
      (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}
