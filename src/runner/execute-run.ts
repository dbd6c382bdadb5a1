import { abortReason } from '../core/index.js';
import { toErrorInfo } from '../core/index.js';
import { loadCrashResume } from './crash-resume.js';
import { abortStatusOf } from './run-abort.js';
import { buildRunContext } from './run-context-builder.js';
import { isRunPause, type RunContext } from './run-context.js';
import { cancelPause, loadResume, recordPause, settleBatch } from './run-pause.js';
import { commitRun, holdRunEnd, openRunRecord, runHistory } from './run-records.js';
import type { RunScope } from './run-scope.js';
import type { RunLease } from './run-services.js';
import type { RunResult, RunSummary } from './run-summary.js';
import { runTurnLoop } from './turn-loop.js';

/** A rejection handled where the promise is awaited later. */
const ignore = (): undefined => undefined;

/** Run the turn loop with a timer for the run timeout; the outcome is the run's end or its next pause. */
async function runSegment(
  scope: RunScope,
  runContext: RunContext,
  startedAt: number,
  lease: RunLease | undefined,
): Promise<RunResult> {
  const { services, request } = scope;
  const { clock, limits } = services;
  const timer = clock.setTimeout(
    () => request.abort('timeout', `the run exceeded ${limits.runTimeoutMs} ms`),
    limits.runTimeoutMs,
  );
  try {
    const outcome = await runTurnLoop(runContext);
    if (isRunPause(outcome)) return recordPause(scope.pause, request.sessionKey, request.run.runId, outcome);
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
 * on the ledger's health: a write the ledger cannot take aborts it, and it then writes nothing more.
 */
export async function executeRunInLane(scope: RunScope): Promise<RunResult> {
  const lease = scope.services.ledgerGuard?.enter(() =>
    scope.request.abort('aborted', 'the ledger cannot record the run'),
  );
  try {
    if (lease?.lost === true) return await holdRunEnd(scope, scope.services.clock.now(), nothingDone);
    if (scope.request.run.resume !== undefined) return await continueRun(scope, lease);
    return await startRun(scope, lease);
  } finally {
    lease?.exit();
  }
}

/** Open a new run and run it: nothing reaches the model before the run's opening is durable. */
async function startRun(scope: RunScope, lease: RunLease | undefined): Promise<RunResult> {
  const startedAt = scope.services.clock.now();
  const opened = openRunRecord(scope, startedAt);
  // Awaited below; a rejection meanwhile (while the history is read) is not unhandled.
  opened.catch(ignore);
  const history = await runHistory(scope);
  // The run is durable before it can cause a side effect: a crash then closes it as crashed instead of running
  // its messages (and their tools) a second time under a new run. An opening the ledger could not take stops the
  // run here, before its model call.
  try {
    await opened;
  } catch (error) {
    if (lease?.lost === true) return holdRunEnd(scope, startedAt, nothingDone);
    throw error;
  }
  // A corrupt turn (reported once by the ledger) is not transient: the run ends failed, never started again.
  if ('error' in history) return commitRun(scope, startedAt, { ...nothingDone, error: history.error });
  const counters = { turnIndex: 0, compensationSeq: 1 };
  // Awaited: the async function's promise then settles with the segment's outcome, not through a thenable job.
  return await runSegment(scope, buildRunContext(scope, undefined, counters, { history }), startedAt, lease);
}

/** Continue a paused run: settle its batch (approved calls run now), then go on with the turn loop. */
async function continueRun(scope: RunScope, lease: RunLease | undefined): Promise<RunResult> {
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
async function resumeCrashedRun(scope: RunScope, lease: RunLease | undefined): Promise<RunResult> {
  const { services, request } = scope;
  const { run } = request;
  const loaded = await loadCrashResume(scope, run.runId);
  const { text, usage, cost } = loaded.resume;
  if (loaded.answered) return commitRun(scope, run.startedAt, { status: 'completed', text, usage, cost });
  const compensations = await services.ledger.listCompensations(run.runId);
  const counters = { turnIndex: loaded.turns, compensationSeq: compensations.length + 1 };
  const runContext = buildRunContext(scope, loaded.resume, counters, {
    history: [],
    settleResumed: (results) => settleBatch(scope.pause, loaded.records, results),
  });
  return await runSegment(scope, runContext, run.startedAt, lease);
}

/** A run aborted before it reached the turn loop: a new run opens and ends; a paused one ends as it stood. */
export async function endRunBeforeStart(scope: RunScope): Promise<RunSummary> {
  // Its session stopped for a ledger fault: the session is reconciled from the ledger, this writes nothing.
  const lease = scope.services.ledgerGuard?.enter(() => undefined);
  try {
    if (lease?.lost === true) return await holdRunEnd(scope, scope.services.clock.now(), nothingDone);
    return await recordEndBeforeStart(scope);
  } finally {
    lease?.exit();
  }
}

/** Record the end of a run aborted before it reached the turn loop. */
async function recordEndBeforeStart(scope: RunScope): Promise<RunSummary> {
  const { services, request } = scope;
  const { run } = request;
  const error = toErrorInfo(abortReason(request.signal));
  const status = abortStatusOf(request.signal);
  if (run.resume !== undefined) {
    const record = await services.ledger.getRun(run.runId);
    await cancelPause(scope.pause, run.runId);
    const usage = record?.usage ?? { inputTokens: 0, outputTokens: 0 };
    const progress = { text: record?.text ?? '', usage, cost: record?.cost ?? 0 };
    return commitRun(scope, run.startedAt, { status, ...progress, error });
  }
  const startedAt = services.clock.now();
  // Its failure is reported by openRunRecord; the commit below fails the same way and says so.
  openRunRecord(scope, startedAt).catch(() => undefined);
  const nothing = { text: '', usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 };
  return commitRun(scope, startedAt, { status, ...nothing, error });
}
