import type Database from 'better-sqlite3';

/** Commits the writes of one event-loop turn in one transaction. */
export interface GroupCommit {
  /**
   * Run `work` (synchronous SQL) now, inside this turn's transaction; resolves once that transaction committed.
   * A write that fails rejects alone and leaves nothing behind: one statement is atomic in SQLite, and work of
   * several statements (`statements: 'many'`) runs in its own savepoint.
   */
  write(work: () => void, statements?: 'one' | 'many'): Promise<void>;
  /** Commit the open transaction now (close, and anything that must be durable before going on). */
  commit(): void;
  readonly open: boolean;
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * A turn that never yields (work chained on promises alone starves setImmediate) would keep its transaction open
 * and its writers waiting: past this age or size the batch commits at its next write instead.
 */
const maxBatchMs = 1;
const maxBatchWrites = 512;

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Group commit: the first write of an event-loop turn opens a transaction, every write of the turn runs in it
 * at once, and one COMMIT at the end of the turn (one fsync under synchronous FULL) makes them all durable and
 * resolves their promises (a batch also commits once it is 1 ms old or 512 writes long, as soon as the synchronous
 * stretch that wrote it is done). Reads on the same connection see the writes without committing them, so a read never
 * forces an fsync. If COMMIT fails, the whole turn is rolled back and every write of it rejects.
 */
export function createGroupCommit(
  db: Database.Database,
  schedule: (commit: () => void) => void,
): GroupCommit {
  let waiters: Waiter[] = [];
  let open = false;
  let openedAt = 0;
  let early = false;
  const inSavepoint = db.transaction((work: () => void) => work());

  function commit(): void {
    if (!open) return;
    const batch = waiters;
    waiters = [];
    open = false;
    early = false;
    try {
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      const failure = asError(error);
      for (const waiter of batch) waiter.reject(failure);
      return;
    }
    for (const waiter of batch) waiter.resolve();
  }

  return {
    write(work, statements = 'many') {
      if (!open) {
        db.exec('BEGIN IMMEDIATE');
        open = true;
        openedAt = performance.now();
        schedule(commit);
      }
      try {
        if (statements === 'one') work();
        else inSavepoint(work);
      } catch (error) {
        return Promise.reject(asError(error));
      }
      const done = new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
      // Never commit in the middle of a synchronous stretch: writes issued together (open a run and consume its
      // messages; close a run and record run.ended) must land in one transaction, or a crash between them splits
      // them. A microtask runs once the current stretch is done.
      if (!early && (waiters.length >= maxBatchWrites || performance.now() - openedAt >= maxBatchMs)) {
        early = true;
        queueMicrotask(commit);
      }
      return done;
    },
    commit,
    get open() {
      return open;
    },
  };
}
