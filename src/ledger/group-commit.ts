import type Database from 'better-sqlite3';

interface Write {
  readonly work: () => void;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** Queues writes and commits them in one transaction per event-loop turn. */
export interface GroupCommit {
  /** Queue `work` (synchronous SQL); resolves once its transaction committed, rejects if it failed. */
  write(work: () => void): Promise<void>;
  /** Commit what is queued now (reads call this first, so they see every earlier write). */
  flush(): void;
  readonly queued: number;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Group commit: every write of one event-loop turn goes into one transaction, so a FULL-synchronous commit
 * (an fsync) is paid once per turn instead of once per row. A failing write must not take the others down:
 * when the batch fails, it is replayed with each write in its own savepoint, and only the failing ones reject.
 */
export function createGroupCommit(db: Database.Database, schedule: (flush: () => void) => void): GroupCommit {
  let queue: Write[] = [];
  let scheduled = false;
  const inSavepoint = db.transaction((work: () => void) => work());

  function commitEach(batch: readonly Write[]): (Error | undefined)[] {
    const outcomes: (Error | undefined)[] = [];
    db.transaction(() => {
      for (const write of batch) {
        try {
          inSavepoint(write.work);
          outcomes.push(undefined);
        } catch (error) {
          outcomes.push(asError(error));
        }
      }
    })();
    return outcomes;
  }

  function flush(): void {
    scheduled = false;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    let outcomes: (Error | undefined)[];
    try {
      db.transaction(() => {
        for (const write of batch) write.work();
      })();
      outcomes = [];
    } catch {
      try {
        outcomes = commitEach(batch);
      } catch (error) {
        const failure = asError(error);
        outcomes = batch.map(() => failure);
      }
    }
    batch.forEach((write, index) => {
      const failure = outcomes[index];
      if (failure === undefined) write.resolve();
      else write.reject(failure);
    });
  }

  return {
    write(work) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ work, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },
    flush,
    get queued() {
      return queue.length;
    },
  };
}
