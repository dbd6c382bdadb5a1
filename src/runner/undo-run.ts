import { createDeferred, RuntimeError, type ErrorInfo } from '../core/index.js';
import type { CompensationRecord } from '../ledger/index.js';
import { executeTool } from '../tools/index.js';
import { assertNoPausedRun, type SessionScope } from './session-scope.js';
import type { RunBasics, ToolServices } from './run-services.js';
import type { ActiveUndo, RunWork } from './run-work.js';
import { finishWork } from './execute-run.js';

/** What became of one compensation in an undo; `in_doubt`: it started once and its outcome is unknown. */
export interface UndoStep {
  readonly seq: number;
  readonly toolCallId: string;
  readonly tool: string;
  readonly status: 'done' | 'failed' | 'in_doubt';
  readonly error?: ErrorInfo;
}

/** What `session.undo(runId)` resolves with: the compensations it ran (or found in doubt), latest call first. */
export interface UndoResult {
  readonly runId: string;
  readonly steps: readonly UndoStep[];
}

/** The operator's decision on compensations in doubt: `skip` reports them (the default), `retry` runs them again. */
export interface UndoOptions {
  /** @default 'skip' */
  readonly inDoubt?: 'skip' | 'retry';
}

/**
 * Undo a run: run its compensations not yet done in reverse order (the last effect first), recording each as
 * `started` before it runs and with its outcome after, through the one tool executor (the tool's timeout and
 * retry apply). A compensation that fails is recorded `failed` and the others still run; a later undo tries it
 * again. One cut off by `session.abort()`, `close()` or its timeout may still be running (a tool can ignore its
 * signal): it is recorded `in_doubt`, as one found `started` after a crash, and no undo starts it again unless
 * called with `inDoubt: 'retry'`. An aborted undo runs no more compensations.
 */
export function undoRun(
  scope: SessionScope,
  runId: string,
  options: UndoOptions = {},
  signal?: AbortSignal,
): Promise<UndoResult> {
  // Queued in the session machine behind a run, it may only start once close() began: nothing runs then.
  if (!scope.services.accepting()) {
    return Promise.reject(new RuntimeError('runtime_closed', 'undo: the runtime is closing'));
  }
  const controller = new AbortController();
  // The run's signal (the session machine's `abort()` or an interrupting message) aborts the undo.
  if (signal !== undefined) followAbort(signal, controller);
  const done = createDeferred<void>();
  const entry: ActiveUndo = { controller, finished: done.promise, sessionKey: scope.control.key };
  scope.work.undos.add(entry);
  return runCompensations(scope, runId, controller.signal, options.inDoubt === 'retry').finally(() => {
    scope.work.undos.delete(entry);
    done.resolve();
  });
}

/**
 * `session.undo(runId)`: an undo is a run of the session, which its machine starts when no other run is active. A
 * session whose run is paused refuses it (`rejected_busy`), as it refuses a plan: a pause may last a day.
 */
export function startUndo(
  scope: SessionScope,
  runId: string,
  options: UndoOptions = {},
): Promise<UndoResult> {
  assertNoPausedRun(scope.control, 'undo');
  return scope.control.run('undo', runId, (signal) => undoRun(scope, runId, options, signal));
}

/** Abort `controller` with a `cancelled` error of the same message when `signal` aborts. */
function followAbort(signal: AbortSignal, controller: AbortController): void {
  const abort = (): void => {
    const reason: unknown = signal.reason;
    const message = reason instanceof Error ? reason.message : 'the undo was aborted';
    controller.abort(new RuntimeError('cancelled', message));
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
}

async function compensate(
  services: RunBasics & Pick<ToolServices, 'toolByName'>,
  record: CompensationRecord,
  signal: AbortSignal,
): Promise<ErrorInfo | undefined> {
  const tool = services.toolByName(record.tool);
  if (tool === undefined) {
    return { code: 'not_found', message: `no tool "${record.tool}" with undo is configured` };
  }
  const outcome = await executeTool(tool, record.args, {
    signal,
    clock: services.clock,
    random: services.random,
    call: { toolCallId: record.toolCallId, sessionKey: record.sessionKey, runId: record.runId },
    undoOf: { output: record.result },
  });
  return outcome.ok ? undefined : outcome.error;
}

/** Why a compensation that started has no known outcome, or undefined when its outcome is known. */
function doubtOf(error: ErrorInfo, signal: AbortSignal): string | undefined {
  if (signal.aborted) return `the undo was aborted while it ran (${error.message})`;
  if (error.code === 'timeout') return `it timed out while it ran (${error.message})`;
  return undefined;
}

/** Run one compensation: `started` first, then its outcome; cut off, it is `in_doubt`. */
async function runOne(
  scope: SessionScope,
  record: CompensationRecord,
  signal: AbortSignal,
): Promise<UndoStep> {
  const { services, control } = scope;
  const { ledger, clock } = services;
  const { runId, seq, toolCallId, tool } = record;
  const base = { runId, toolCallId, tool, index: seq };
  await ledger.updateCompensation(runId, seq, { status: 'started', undoneAt: clock.now() });
  const error = await compensate(services, record, signal);
  const undoneAt = clock.now();
  if (error === undefined) {
    await ledger.updateCompensation(runId, seq, { status: 'done', undoneAt });
    control.emit({ type: 'undo.executed', ...base });
    return { seq, toolCallId, tool, status: 'done' };
  }
  const doubt = doubtOf(error, signal);
  if (doubt !== undefined) {
    await ledger.updateCompensation(runId, seq, { status: 'in_doubt', error, undoneAt });
    control.emit({ type: 'undo.in_doubt', ...base, reason: doubt });
    return { seq, toolCallId, tool, status: 'in_doubt', error };
  }
  await ledger.updateCompensation(runId, seq, { status: 'failed', error, undoneAt });
  control.emit({ type: 'undo.failed', ...base, error });
  return { seq, toolCallId, tool, status: 'failed', error };
}

/** A compensation that started before and has no outcome: recorded and reported `in_doubt`, not run. */
async function reportInDoubt(scope: SessionScope, record: CompensationRecord): Promise<UndoStep> {
  const { runId, seq, toolCallId, tool } = record;
  const reason =
    record.status === 'started'
      ? 'it started and no outcome was recorded (the process stopped while it ran)'
      : 'an earlier undo could not tell whether it ran';
  const error = record.error ?? { code: 'cancelled' as const, message: reason };
  if (record.status === 'started') {
    await scope.services.ledger.updateCompensation(runId, seq, {
      status: 'in_doubt',
      error,
      undoneAt: scope.services.clock.now(),
    });
  }
  scope.control.emit({ type: 'undo.in_doubt', runId, toolCallId, tool, index: seq, reason });
  return { seq, toolCallId, tool, status: 'in_doubt', error };
}

async function runCompensations(
  scope: SessionScope,
  runId: string,
  signal: AbortSignal,
  retryInDoubt: boolean,
): Promise<UndoResult> {
  const records = (await scope.services.ledger.listCompensations(runId)).filter(
    (record) => record.status !== 'done',
  );
  const steps: UndoStep[] = [];
  for (const record of records.reverse()) {
    if (signal.aborted) break;
    const doubtful = record.status === 'started' || record.status === 'in_doubt';
    steps.push(
      doubtful && !retryInDoubt ? await reportInDoubt(scope, record) : await runOne(scope, record, signal),
    );
  }
  return { runId, steps };
}

/**
 * Let the plan runs and undos in progress finish within `timeoutMs`, then abort those still running and wait for
 * them to record how they stopped (what `runtime.close()` does before the ledger closes): plans first, then undos.
 */
export async function finishRunWork(
  services: Pick<RunBasics, 'clock'>,
  work: RunWork,
  timeoutMs: number,
): Promise<void> {
  const plans = [...work.plans.values()].flatMap((runs) => [...runs.values()]);
  await finishWork(services.clock, plans, timeoutMs);
  await finishWork(services.clock, [...work.undos], timeoutMs);
}
