import { RuntimeError } from '../core/index.js';
import { storableTextProblem } from '../core/index.js';
import type { UndoOptions } from '../runner/index.js';
import type { RuntimeInternals } from './runtime-internals.js';

/** Check `undo()`'s options: `inDoubt` is 'skip' or 'retry'; anything else is `invalid_input`. */
export function parseUndoOptions(options: unknown): UndoOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) {
    throw new RuntimeError('invalid_input', 'undo: options must be an object');
  }
  const { inDoubt, ...rest } = options as { inDoubt?: unknown };
  if (Object.keys(rest).length > 0) {
    throw new RuntimeError('invalid_input', `undo: unknown option "${Object.keys(rest)[0] ?? ''}"`);
  }
  if (inDoubt !== undefined && inDoubt !== 'skip' && inDoubt !== 'retry') {
    throw new RuntimeError('invalid_input', 'undo: inDoubt must be "skip" or "retry"');
  }
  return inDoubt === undefined ? {} : { inDoubt };
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
  const problem = storableTextProblem(runId);
  if (problem !== undefined) throw new RuntimeError('invalid_input', `undo: runId ${problem}`);
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
