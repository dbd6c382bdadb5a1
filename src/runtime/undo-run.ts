import type { LiveSession } from '../actors/session-registry.js';
import { createDeferred } from '../core/deferred.js';
import { RuntimeError, type ErrorInfo } from '../core/errors.js';
import type { CompensationRecord } from '../ledger/ledger.js';
import { executeTool } from '../tools/execute-tool.js';
import { settleWork, type WorkInProgress } from './settle-work.js';
import type { RuntimeInternals } from './runtime-internals.js';

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

/** An undo running now: its abort (which `abort()` and `close()` reach) and its session. */
export interface ActiveUndo extends WorkInProgress {
  readonly sessionKey: string;
}

/**
 * Undo a run: run its compensations not yet done in reverse order (the last effect first), recording each, through
 * the one tool executor (the tool's timeout and retry apply). A compensation that fails is recorded `failed` and
 * the others still run; a later undo tries it again. An undo that `session.abort()` or `close()` aborts records the
 * compensation in progress `failed` (cancelled) and runs no more.
 */
export function undoRun(
  internals: RuntimeInternals,
  session: LiveSession,
  runId: string,
): Promise<UndoResult> {
  // Queued in the session lane behind a run, it may only start once close() began: nothing runs then.
  if (internals.isClosed()) {
    return Promise.reject(new RuntimeError('runtime_closed', 'undo: the runtime is closing'));
  }
  const controller = new AbortController();
  const done = createDeferred<void>();
  const entry: ActiveUndo = { controller, finished: done.promise, sessionKey: session.key };
  internals.activeUndos.add(entry);
  return runCompensations(internals, session, runId, controller.signal).finally(() => {
    internals.activeUndos.delete(entry);
    done.resolve();
  });
}

/** Abort the undos `sessionKey` is running now (what `session.abort()` does); how many there were. */
export function abortUndos(internals: RuntimeInternals, sessionKey: string, reason: string): number {
  const undos = [...internals.activeUndos].filter((undo) => undo.sessionKey === sessionKey);
  for (const undo of undos) undo.controller.abort(new RuntimeError('cancelled', reason));
  return undos.length;
}

async function compensate(
  internals: RuntimeInternals,
  record: CompensationRecord,
  signal: AbortSignal,
): Promise<ErrorInfo | undefined> {
  const tool = internals.sessionTools.byName(record.tool);
  if (tool === undefined) {
    return { code: 'not_found', message: `no tool "${record.tool}" with undo is configured` };
  }
  const outcome = await executeTool(tool, record.args, {
    signal,
    clock: internals.services.clock,
    random: internals.services.random,
    call: { toolCallId: record.toolCallId, sessionKey: record.sessionKey, runId: record.runId },
    undoOf: { output: record.result },
  });
  return outcome.ok ? undefined : outcome.error;
}

async function runCompensations(
  internals: RuntimeInternals,
  session: LiveSession,
  runId: string,
  signal: AbortSignal,
): Promise<UndoResult> {
  const { ledger, clock } = internals.services;
  const records = (await ledger.listCompensations(runId)).filter((record) => record.status !== 'done');
  const steps: UndoStep[] = [];
  for (const record of records.reverse()) {
    if (signal.aborted) break;
    const { seq, toolCallId, tool: name } = record;
    const error = await compensate(internals, record, signal);
    const base = { runId, toolCallId, tool: name, index: seq };
    const undoneAt = clock.now();
    if (error === undefined) {
      await ledger.updateCompensation(runId, seq, { status: 'done', undoneAt });
      internals.emit(session, { type: 'undo.executed', ...base });
      steps.push({ seq, toolCallId, tool: name, status: 'done' });
    } else {
      await ledger.updateCompensation(runId, seq, { status: 'failed', error, undoneAt });
      internals.emit(session, { type: 'undo.failed', ...base, error });
      steps.push({ seq, toolCallId, tool: name, status: 'failed', error });
    }
  }
  return { runId, steps };
}

/**
 * Let the undos in progress finish within `timeoutMs`, then abort those still running and wait for them to
 * record the compensation they were in (what `runtime.close()` does before the ledger closes).
 */
export function settleActiveUndos(internals: RuntimeInternals, timeoutMs: number): Promise<void> {
  return settleWork(internals.services.clock, [...internals.activeUndos], timeoutMs);
}

/** Check that `runId` names an ended run of this session; `not_found` or `invalid_input` otherwise. */
export async function assertUndoable(
  internals: RuntimeInternals,
  sessionKey: string,
  runId: unknown,
): Promise<string> {
  if (typeof runId !== 'string' || runId.length === 0) {
    throw new RuntimeError('invalid_input', 'undo: runId must be a non-empty string');
  }
  const run = await internals.services.ledger.getRun(runId);
  if (run === undefined || run.sessionKey !== sessionKey) {
    throw new RuntimeError('not_found', `undo: session "${sessionKey}" has no run "${runId}"`);
  }
  if (
    run.status === 'running' ||
    run.status === 'awaiting_approval' ||
    run.status === 'awaiting_tool_results'
  ) {
    throw new RuntimeError(
      'invalid_input',
      `undo: run "${runId}" has not ended (abort it or wait for it first)`,
    );
  }
  return runId;
}
