import { rmSync } from 'node:fs';
import { RuntimeError } from '../../core/index.js';
import { inspectLedgerFile, isLedgerHeld } from '../ledger-file.js';

/**
 * Make room for the demo's ledger at `path`: remove the file (and its side files) only when it is an agentlanes
 * ledger, or empty, and no process holds it. Anything else is refused with a `RuntimeError` naming the path, and
 * nothing is deleted.
 */
export function prepareDemoFile(path: string): void {
  const details = { path };
  const pick = 'pick another --db';
  const inspection = inspectLedgerFile(path);
  switch (inspection.kind) {
    case 'directory':
      throw new RuntimeError('ledger_unavailable', `${path} is a directory, not a ledger file: ${pick}`, {
        details,
      });
    case 'not_sqlite':
    case 'foreign':
      throw new RuntimeError(
        'ledger_foreign',
        `${path} is not an agentlanes ledger; the demo replaces only its own files: ${pick}`,
        { details },
      );
    case 'missing':
    case 'empty':
    case 'agentlanes':
      break;
  }
  if (isLedgerHeld(path)) {
    throw new RuntimeError(
      'ledger_locked',
      `${path} is in use by another process (another demo?): wait for it to end or ${pick}`,
      { details },
    );
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-lock`]) rmSync(file, { force: true });
}
