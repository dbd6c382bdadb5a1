import Database from 'better-sqlite3';
import { setTimeout as pause } from 'node:timers/promises';

/**
 * Resolves once the file shows no work left: no pending message, no open run (running or paused), and no new
 * event for `quietMs` (a run that just ended may still hand its queue to the drain). Rejects with the backlog after
 * `timeoutMs`. A read-only poll: the child has no signal for "all work done", only its file shows it.
 */
export async function settled(dbPath: string, timeoutMs: number, quietMs = 400): Promise<void> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const backlog = db.prepare(
      `SELECT (SELECT count(*) FROM inbox WHERE status = 'pending') AS pending,
              (SELECT count(*) FROM runs WHERE status IN ('running', 'awaiting_approval', 'awaiting_tool_results')) AS open,
              (SELECT coalesce(max(cursor), 0) FROM events) AS cursor`,
    );
    const deadline = Date.now() + timeoutMs;
    let last = { pending: -1, open: -1, cursor: -1 };
    let quietSince = Date.now();
    for (;;) {
      const now = backlog.get() as typeof last;
      if (now.cursor !== last.cursor) quietSince = Date.now();
      last = now;
      if (now.pending === 0 && now.open === 0 && Date.now() - quietSince >= quietMs) return;
      if (Date.now() > deadline) throw new Error(`the last child did not settle: ${JSON.stringify(now)}`);
      await pause(25);
    }
  } finally {
    db.close();
  }
}
