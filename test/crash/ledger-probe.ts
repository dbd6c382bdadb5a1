import Database from 'better-sqlite3';
import { setTimeout as pause } from 'node:timers/promises';

/**
 * Read-only looks at the ledger file while a child writes it (WAL readers never block the writer). These poll:
 * the child has no signal for "recovery closed a run" or "all work done", only its file shows them.
 */

function withReader<T>(dbPath: string, work: (db: Database.Database) => Promise<T> | T): Promise<T> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  return Promise.resolve()
    .then(() => work(db))
    .finally(() => db.close());
}

/** Runs still `running` in the file: after a kill, what it left open. */
export function openRuns(dbPath: string): Promise<string[]> {
  return withReader(dbPath, (db) =>
    (db.prepare("SELECT run_id FROM runs WHERE status = 'running'").all() as { run_id: string }[]).map(
      (row) => row.run_id,
    ),
  );
}

/** Resolves once one of `runIds` is no longer `running` (startup recovery closed it), or after `timeoutMs`. */
export function firstClosed(dbPath: string, runIds: readonly string[], timeoutMs: number): Promise<boolean> {
  return withReader(dbPath, async (db) => {
    const closed = db.prepare(
      "SELECT count(*) AS closed FROM runs WHERE status != 'running' AND run_id IN (SELECT value FROM json_each(?))",
    );
    const ids = JSON.stringify(runIds);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ((closed.get(ids) as { closed: number }).closed > 0) return true;
      await pause(1);
    }
    return false;
  });
}

/** Resolves once no message is pending and no run is open; rejects with the backlog after `timeoutMs`. */
export function drained(dbPath: string, timeoutMs: number): Promise<void> {
  return withReader(dbPath, async (db) => {
    const count = db.prepare(
      "SELECT (SELECT count(*) FROM inbox WHERE status IN ('pending', 'steered')) AS pending, (SELECT count(*) FROM runs WHERE status IN ('running', 'awaiting_approval')) AS running",
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const backlog = count.get() as { pending: number; running: number };
      if (backlog.pending === 0 && backlog.running === 0) return;
      if (Date.now() > deadline) throw new Error(`the last child did not drain: ${JSON.stringify(backlog)}`);
      await pause(25);
    }
  });
}
