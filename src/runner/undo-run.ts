import { createDeferred } from '../core/deferred.js';
import { RuntimeError, type ErrorInfo } from '../core/errors.js';
import type { CompensationRecord } from '../ledger/index.js';
import { executeTool } from '../tools/execute-tool.js';
import type { SessionScope } from './session-scope.js';
import type { RunServices } from './run-services.js';
import type { ActiveUndo, RunWork } from './run-work.js';
import { settleWork } from './settle-work.js';

/** What became of one compensation in an undo. */
export interface UndoStep {
  readonly seq: number;
  readonly toolCallId: string;
  readonly tool: string;
  readonly status: 'done' | 'failed';
  readonly error?: ErrorInfo;
}

/** What `session.undo(runId)` resolves with: the compensations it ran, latest call first. */
export interface UndoResult {
  readonly runId: string;
  readonly steps: readonly UndoStep[];
}

/**
 * Undo a run: run its compensations not yet done in reverse order (the last effect first), recording each, through
 * the one tool executor (the tool's timeout and retry apply). A compensation that fails is recorded `failed` and
 * the others still run; a later undo tries it again. An undo that `session.abort()` or `close()` aborts records the
 * compensation in progress `failed` (cancelled) and runs no more.
 */
export function undoRun(scope: SessionScope, runId: string): Promise<UndoResult> {
  // Queued in the session lane behind a run, it may only start once close() began: nothing runs then.
  if (!scope.services.accepting()) {
    return Promise.reject(new RuntimeError('runtime_closed', 'undo: the runtime is closing'));
  }
  const controller = new AbortController();
  const done = createDeferred<void>();
  const entry: ActiveUndo = { controller, finished: done.promise, sessionKey: scope.control.key };
  scope.work.undos.add(entry);
  return runCompensations(scope, runId, controller.signal).finally(() => {
    scope.work.undos.delete(entry);
    done.resolve();
  });
}

/** Abort the undos `sessionKey` is running now (what `session.abort()` does); how many there were. */
export function abortUndos(work: RunWork, sessionKey: string, reason: string): number {
  const undos = [...work.undos].filter((undo) => undo.sessionKey === sessionKey);
  for (const undo of undos) undo.controller.abort(new RuntimeError('cancelled', reason));
  return undos.length;
}

async function compensate(
  services: RunServices,
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

async function runCompensations(
  scope: SessionScope,
  runId: string,
  signal: AbortSignal,
): Promise<UndoResult> {
  const { services, control } = scope;
  const { ledger, clock } = services;
  const records = (await ledger.listCompensations(runId)).filter((record) => record.status !== 'done');
  const steps: UndoStep[] = [];
  for (const record of records.reverse()) {
    if (signal.aborted) break;
    const { seq, toolCallId, tool: name } = record;
    const error = await compensate(services, record, signal);
    const base = { runId, toolCallId, tool: name, index: seq };
    const undoneAt = clock.now();
    if (error === undefined) {
      await ledger.updateCompensation(runId, seq, { status: 'done', undoneAt });
      control.emit({ type: 'undo.executed', ...base });
      steps.push({ seq, toolCallId, tool: name, status: 'done' });
    } else {
      await ledger.updateCompensation(runId, seq, { status: 'failed', error, undoneAt });
      control.emit({ type: 'undo.failed', ...base, error });
      steps.push({ seq, toolCallId, tool: name, status: 'failed', error });
    }
  }
  return { runId, steps };
}

/**
 * Let the plan runs and undos in progress finish within `timeoutMs`, then abort those still running and wait for
 * them to record how they stopped (what `runtime.close()` does before the ledger closes): plans first, then undos.
 */
export async function settleRunWork(services: RunServices, work: RunWork, timeoutMs: number): Promise<void> {
  const plans = [...work.plans.values()].flatMap((runs) => [...runs.values()]);
  await settleWork(services.clock, plans, timeoutMs);
  await settleWork(services.clock, [...work.undos], timeoutMs);
}
