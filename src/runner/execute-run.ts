import {
  RuntimeError,
  abortReason,
  toErrorInfo,
  isRuntimeError,
  isSettledWrite,
  type ErrorInfo,
  settledWrite,
  type RunStatus,
  type Clock,
  createDeferred,
} from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { LaneWaitInfo } from '../lanes/index.js';
import type { RunJob, ExecuteRun, RunRequest, RunSummary, RunPort } from './run-request.js';
import { isRunEnding, isRunPausing, type ExecutedRun, type RunEnding } from './run-request.js';
import { commitRun, holdRunEnd, holdUntilAdopted } from './run-end.js';
import { type RunServices, type RunLease, writeInBackground } from './run-services.js';
import { loadCrashResume } from './crash-resume.js';
import { buildRunContext } from './run-context.js';
import { isRunPause, type RunContext } from './run-context.js';
import { cancelPause, loadResume, pausingOf, settleBatch, type PauseDeps } from './run-pause.js';
import { runTurnLoop } from './turn-loop.js';
import type { ModelMessage } from '../providers/index.js';
import { turnsToMessages } from './transcript.js';

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
    const scope = openRunScope(services, request, port);
    // A paused run aborted or interrupted meanwhile only ends; it needs no lane, and it ends even while closing.
    if (request.run.resume !== undefined && request.signal.aborted) return endRunBeforeStart(scope);
    if (!services.accepting()) throw new RuntimeError('runtime_closed', 'the runtime is closing');
    return runInLanes(scope);
  };
}

/**
 * Queue the run in the global lane (a subagent's run: the subagent lane). Aborted while still waiting there, the run never reached the model: it ends now, and the lane task that would have run it
 * returns at once when its turn comes (one listener per run, instead of wiring the signal through the lane). A run
 * holds its slot until its session adopted its outcome and issued its write (`holdUntilAdopted`).
 */
function runInLanes(scope: RunScope): Promise<ExecutedRun> {
  const { services, request, port } = scope;
  const { signal, run } = request;
  const provider = services.candidates[0].providerName;
  const onWaited = (info: LaneWaitInfo): void =>
    port.emit({ type: 'lane.waited', runId: run.runId, ...info });
  return new Promise<ExecutedRun>((resolve, reject) => {
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
    const task = async (): Promise<ExecutedRun | undefined> => {
      started = true;
      if (signal.aborted) return undefined;
      const executed = await executeRunInLane(scope);
      if (!isRunEnding(executed) && !isRunPausing(executed)) return executed;
      const adopted = createDeferred<void>();
      settle(() => resolve(holdUntilAdopted(executed, adopted)));
      await adopted.promise;
      return executed;
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

/** A rejection handled where the promise is awaited later. */
const ignore = (): undefined => undefined;

/** Run the turn loop with a timer for the run timeout; the outcome is the run's end or its next pause, to write. */
async function runSegment(
  scope: RunScope,
  runContext: RunContext,
  startedAt: number,
  lease: RunLease | undefined,
): Promise<ExecutedRun> {
  const { services, request } = scope;
  const { clock, limits } = services;
  const timer = clock.setTimeout(
    () => request.abort('timeout', `the run exceeded ${limits.runTimeoutMs} ms`),
    limits.runTimeoutMs,
  );
  try {
    const outcome = await runTurnLoop(runContext);
    if (isRunPause(outcome)) return pausingOf(scope.pause, request.sessionKey, request.run.runId, outcome);
    return await commitRun(scope, startedAt, outcome, lease);
  } finally {
    clock.clearTimeout(timer);
  }
}

/** Nothing of the run could be recorded yet: it ends without a model call, holding its lane until the ledger heals. */
const nothingDone = {
  status: 'failed',
  text: '',
  usage: { inputTokens: 0, outputTokens: 0 },
  cost: 0,
} as const;

/**
 * Execute a run in its lanes' turn: a new run opens and runs; a paused one continues. While it runs it holds a lease
 * on the ledger's health: a write the ledger cannot take aborts it, and it then writes nothing more. A run that
 * returns its end to write keeps the lease until that end is written (`RunEnding.close` lets it go).
 */
export async function executeRunInLane(scope: RunScope): Promise<ExecutedRun> {
  const lease = scope.services.ledgerGuard?.enter(() =>
    scope.request.abort('aborted', 'the ledger cannot record the run'),
  );
  let executed: ExecutedRun | undefined;
  try {
    if (lease?.lost === true)
      return (executed = await holdRunEnd(scope, scope.services.clock.now(), nothingDone));
    if (scope.request.run.resume !== undefined) return (executed = await continueRun(scope, lease));
    return (executed = await startRun(scope, lease));
  } finally {
    if (executed === undefined || !isRunEnding(executed)) lease?.exit();
  }
}

/**
 * Open a new run and run it. Nothing it does is observable before its opening is durable: on most ledgers the
 * model is not called before then; on a ledger whose writes commit in call order (`writesCommitInOrder`: SQLite's
 * one connection) the model is called at once, since its events, turns and end commit with the opening or after
 * it, and its tools wait for the opening (`openedFirst`). A crash before that COMMIT leaves the run's messages
 * pending and no trace of the run: they run again. This saves a COMMIT the run would wait for.
 */
async function startRun(scope: RunScope, lease: RunLease | undefined): Promise<ExecutedRun> {
  const startedAt = scope.services.clock.now();
  const opening = openRunRecord(scope, startedAt);
  const opened = opening.written;
  // Awaited below; a rejection meanwhile (while the history is read) is not unhandled.
  opened.catch(ignore);
  const history = await runHistory(scope);
  const inOrder = scope.services.ledger.writesCommitInOrder === true;
  // The run is durable before it can cause a side effect: a crash then closes it as crashed instead of running
  // its messages (and their tools) a second time under a new run. An opening the ledger could not take stops the
  // run here, before its model call (in call order: before its tools and its end, which wait for it).
  try {
    if (!inOrder) await opened;
  } catch (error) {
    if (lease?.lost === true) return holdRunEnd(scope, startedAt, nothingDone);
    throw error;
  }
  const running = inOrder ? openedFirst(scope, opening) : scope;
  // A corrupt turn (reported once by the ledger) is not transient: the run ends failed, never started again.
  if ('error' in history)
    return commitRun(running, startedAt, { ...nothingDone, error: history.error }, lease);
  const counters = { turnIndex: 0, compensationSeq: 1 };
  // Awaited: the async function's promise then settles with the segment's outcome, not through a thenable job.
  return await runSegment(
    running,
    buildRunContext(running, undefined, counters, { history }),
    startedAt,
    lease,
  );
}

/**
 * The scope of a run whose opening is not durable yet: its end waits for the opening with its turns (a failed
 * opening ends it `failed`, as a lost turn does), and a tool call waits for it as for the events before the call.
 */
function openedFirst(scope: RunScope, { written: opened, writes }: RunOpening): RunScope {
  // The ledger's own promises: `closesWith` knows them (not a promise made of them).
  for (const write of writes) scope.writes.track(write);
  const { port } = scope;
  if (port.durable === undefined) return scope;
  const waiting: RunPort = {
    key: port.key,
    emit: (event) => port.emit(event),
    setPhase: (phase) => port.setPhase(phase),
    durable: () => opened.then(() => port.durable?.()),
  };
  return { ...scope, port: waiting };
}

/** Continue a paused run: settle its batch (approved calls run now), then go on with the turn loop. */
async function continueRun(scope: RunScope, lease: RunLease | undefined): Promise<ExecutedRun> {
  const { services, request } = scope;
  const { run } = request;
  // Still `running` in the ledger: a crash (or a worker's death) cut it, and recovery let it resume.
  if ((await services.ledger.getRun(run.runId))?.status === 'running') return resumeCrashedRun(scope, lease);
  const loaded = await loadResume(scope.pause, request.sessionKey, run.runId);
  const compensations = await services.ledger.listCompensations(run.runId);
  // Durable before any approved call runs: a crash after a side effect must find the run open (it closes as
  // crashed), never still paused with its approval recorded (the call would run a second time).
  await services.ledger.setRunStatus(run.runId, 'running');
  scope.port.emit({ type: 'run.resumed', runId: run.runId, from: loaded.from });
  const counters = { turnIndex: loaded.turns, compensationSeq: compensations.length + 1 };
  const runContext = buildRunContext(scope, loaded.resume, counters, {
    history: [],
    settleResumed: (results) => settleBatch(scope.pause, loaded.batch, results),
  });
  return await runSegment(scope, runContext, run.startedAt, lease);
}

/**
 * Resume a run cut by a crash from its last durable boundary (`run.resumed` is out already, from recovery): the
 * turn loop goes on from its recorded turns, the cut batch settled first (calls in doubt pause the run again).
 */
async function resumeCrashedRun(scope: RunScope, lease: RunLease | undefined): Promise<ExecutedRun> {
  const { services, request } = scope;
  const { run } = request;
  const loaded = await loadCrashResume(scope, run.runId);
  const { text, usage, cost } = loaded.resume;
  if (loaded.answered)
    return commitRun(scope, run.startedAt, { status: 'completed', text, usage, cost }, lease);
  const compensations = await services.ledger.listCompensations(run.runId);
  const counters = { turnIndex: loaded.turns, compensationSeq: compensations.length + 1 };
  const runContext = buildRunContext(scope, loaded.resume, counters, {
    history: [],
    settleResumed: (results) => settleBatch(scope.pause, loaded.records, results),
  });
  return await runSegment(scope, runContext, run.startedAt, lease);
}

/** A run aborted before it reached the turn loop: a new run opens and ends; a paused one ends as it stood. */
export async function endRunBeforeStart(scope: RunScope): Promise<RunSummary | RunEnding> {
  // Its session stopped for a ledger fault: the session is reconciled from the ledger, this writes nothing.
  const lease = scope.services.ledgerGuard?.enter(() => undefined);
  let executed: RunSummary | RunEnding | undefined;
  try {
    if (lease?.lost === true)
      return (executed = await holdRunEnd(scope, scope.services.clock.now(), nothingDone));
    return (executed = await recordEndBeforeStart(scope, lease));
  } finally {
    if (executed === undefined || !isRunEnding(executed)) lease?.exit();
  }
}

/** The end of a run aborted before it reached the turn loop (a new one's opening is written now). */
async function recordEndBeforeStart(
  scope: RunScope,
  lease: RunLease | undefined,
): Promise<RunSummary | RunEnding> {
  const { services, request } = scope;
  const { run } = request;
  const error = toErrorInfo(abortReason(request.signal));
  const status = abortStatusOf(request.signal);
  if (run.resume !== undefined) {
    const record = await services.ledger.getRun(run.runId);
    await cancelPause(scope.pause, run.runId);
    const usage = record?.usage ?? { inputTokens: 0, outputTokens: 0 };
    const progress = { text: record?.text ?? '', usage, cost: record?.cost ?? 0 };
    return commitRun(scope, run.startedAt, { status, ...progress, error }, lease);
  }
  const startedAt = services.clock.now();
  // Its failure is reported by openRunRecord; the commit below fails the same way and says so.
  openRunRecord(scope, startedAt).written.catch(() => undefined);
  const nothing = { text: '', usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 };
  return commitRun(scope, startedAt, { status, ...nothing, error }, lease);
}

/** One run being executed: the shared services, the request, and its session's port taken at the start. */
export interface RunScope {
  readonly services: RunServices;
  readonly request: RunRequest;
  readonly port: RunPort;
  /** What recording and resuming this run's pauses needs. */
  readonly pause: PauseDeps;
  /** The run's background writes (its turns), which its commit waits for. */
  readonly writes: RunWrites;
}

/** Open the scope of a run with the port its session handed it. */
export function openRunScope(services: RunServices, request: RunRequest, port: RunPort): RunScope {
  const pause: PauseDeps = {
    ledger: services.ledger,
    clock: services.clock,
    emit: (event) => port.emit(event),
    write: (promise) => {
      promise.catch(services.onError);
    },
    delivered: () => port.delivered?.() ?? settledWrite,
    historyTurns: services.limits.historyTurns,
  };
  return { services, request, port, pause, writes: createRunWrites() };
}

/** A run's opening: settled once both its writes are (`written`), and the ledger's own promises of them. */
export interface RunOpening {
  readonly written: Promise<void>;
  readonly writes: readonly Promise<void>[];
}

/**
 * Record a run's opening: its run row, its messages marked consumed, and `run.started`. Rejects when either write
 * failed: the run must not reach its model (nothing it did could be recorded).
 */
export function openRunRecord(scope: RunScope, startedAt: number): RunOpening {
  const { services, request, port } = scope;
  const { run, sessionKey } = request;
  const primary = services.candidates[0];
  const parent = services.subagents.parentOf(sessionKey);
  const opened = services.ledger.openRun({
    runId: run.runId,
    sessionKey,
    ...(parent === undefined ? {} : { parentRunId: parent.parentRunId, parentCallId: parent.parentCallId }),
    status: 'running',
    messageIds: run.messageIds,
    provider: primary.providerName,
    model: primary.model,
    startedAt,
    usage: { inputTokens: 0, outputTokens: 0 },
    text: '',
  });
  const consumed = services.ledger.updateMessages(sessionKey, run.messageIds, {
    status: run.consumedAs,
    runId: run.runId,
  });
  writeInBackground(services, opened);
  writeInBackground(services, consumed);
  port.emit({
    type: 'run.started',
    runId: run.runId,
    messageIds: [...run.messageIds],
    provider: primary.providerName,
    model: primary.model,
  });
  // Callers wait for both before any side effect; a failure (also reported above) stops the run there.
  const written =
    isSettledWrite(opened) && isSettledWrite(consumed)
      ? opened
      : Promise.all([opened, consumed]).then(() => undefined);
  return { written, writes: [opened, consumed] };
}

/**
 * The session's earlier conversation a new run sees (`historyTurns` of it), or the error the run ends with when
 * the read met a corrupt row (`ledger_corrupt`, already reported by the ledger): that is not transient, so the
 * run must not go back to the queue to meet it again. Any other failure is thrown (the run did not start, and
 * the drain retries it). The read is awaited once, with no extra hop: a steer sent meanwhile lands as it did.
 */
export async function runHistory(
  scope: RunScope,
): Promise<readonly ModelMessage[] | { readonly error: ErrorInfo }> {
  const { ledger, limits } = scope.services;
  if (limits.historyTurns === 0) return [];
  try {
    const turns = await ledger.listTurns(scope.request.sessionKey, { last: limits.historyTurns });
    return turnsToMessages(turns, limits.historyTurns);
  } catch (error) {
    if (!isRuntimeError(error, 'ledger_corrupt')) throw error;
    return { error: toErrorInfo(error) };
  }
}

/**
 * The ledger writes a run issued in the background (its turns): the run's commit waits for them, and a run whose
 * turn was lost cannot end `completed`.
 */
export interface RunWrites {
  /** Track a write; its failure is also reported by the caller. */
  track(write: Promise<void>): void;
  /** Resolves once every tracked write settled: with the first failure, or undefined when all were durable. */
  settled(): Promise<unknown>;
  /**
   * The writes a run's close called now on `ledger` can be tied to (`RunCloseOptions.after`) instead of waiting for
   * them: none failed, and the ledger commits the close only with them (`Ledger.closesWith`). Undefined when the
   * close must wait for them (`settled`).
   */
  joinable(ledger: Pick<Ledger, 'closesWith'>): readonly Promise<void>[] | undefined;
}

/** No writes yet. A write already durable when issued (the memory ledger's) is not kept: nothing to wait for. */
export function createRunWrites(): RunWrites {
  let pending: Promise<void>[] = [];
  let failure: { readonly error: unknown } | undefined;
  const failed = (error: unknown): void => {
    failure ??= { error };
  };
  const drain = async (): Promise<unknown> => {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      await Promise.allSettled(batch);
    }
    return failure?.error;
  };
  return {
    track(write) {
      if (isSettledWrite(write)) return;
      pending.push(write);
      write.catch(failed);
    },
    settled() {
      // Nothing in flight (every write was durable when issued): the shared settled promise, no frame to wait on.
      if (pending.length === 0 && failure === undefined) return settledWrite;
      return drain();
    },
    joinable(ledger) {
      if (failure !== undefined) return undefined;
      return pending.length === 0 || ledger.closesWith?.(pending) === true ? pending : undefined;
    },
  };
}

/** The statuses a run ends with when its signal is aborted. */
export type AbortStatus = Extract<RunStatus, 'aborted' | 'interrupted' | 'timeout'>;

/** The abort reason for a run's signal: a `cancelled` (or `timeout`) RuntimeError that says how the run ends. */
export function runAbortReason(status: AbortStatus, message: string): RuntimeError {
  return new RuntimeError(status === 'timeout' ? 'timeout' : 'cancelled', message, { details: { status } });
}

/** How a run whose signal aborted ends: the status carried by the reason, `aborted` by default. */
export function abortStatusOf(signal: AbortSignal): AbortStatus {
  const reason: unknown = signal.reason;
  if (reason instanceof RuntimeError) {
    const status = reason.details?.['status'];
    if (status === 'interrupted' || status === 'timeout') return status;
  }
  return 'aborted';
}

/** Work in progress that `runtime.close()` waits for: its abort, and when it has recorded how it stopped. */
export interface WorkInProgress {
  readonly controller: AbortController;
  readonly finished: Promise<void>;
}

/**
 * Let `works` finish within `timeoutMs`, then abort those still running (`cancelled`: the runtime is closing)
 * and wait for each to record how it stopped, so nothing is left half-written when the ledger closes.
 */
export async function finishWork(
  clock: Clock,
  works: readonly WorkInProgress[],
  timeoutMs: number,
): Promise<void> {
  if (works.length === 0) return;
  const finished = Promise.all(works.map((work) => work.finished));
  const expired = createDeferred<void>();
  const timer = clock.setTimeout(() => expired.resolve(), timeoutMs);
  await Promise.race([finished, expired.promise]);
  clock.clearTimeout(timer);
  for (const work of works) work.controller.abort(new RuntimeError('cancelled', 'the runtime is closing'));
  await finished;
}
