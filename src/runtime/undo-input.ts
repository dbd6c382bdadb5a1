import { RuntimeError } from '../core/errors.js';
import { storableTextProblem } from '../core/input-bounds.js';
import type { RuntimeInternals } from './runtime-internals.js';

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
