import { isRuntimeError, RuntimeError } from '../core/index.js';

/**
 * What hydrating a session threw, as the caller sees it: a session whose stored record cannot be restored (a
 * snapshot of the wrong shape throws a TypeError deep in the machine) is `ledger_corrupt` naming its sessions row.
 */
export function restoreFailure(sessionKey: string, error: unknown): RuntimeError {
  if (isRuntimeError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RuntimeError(
    'ledger_corrupt',
    `sessions row "${sessionKey}": cannot restore the session (${reason})`,
    {
      cause: error,
      details: { table: 'sessions', row: `"${sessionKey}"`, sessionKey },
    },
  );
}
