import type Database from 'better-sqlite3';

/** Commits the writes of one event-loop turn in one transaction. */
export interface GroupCommit {
  /**
   * Run `work` (synchronous SQL) now, inside this turn's transaction; resolves once that transaction committed.
   * A write that fails rejects alone and leaves nothing behind: one statement is atomic in SQLite; when work of
   * several statements (`statements: 'many'`) fails, the transaction is rolled back and the batch's other writes
   * run again in a new one, one at a time (no savepoint per write: they were half of the statements run).
   * `work` may therefore run more than once: it must be SQL only, or keep what it learns where `onRollback` clears it.
   * Work that only buffers rows (written just before the COMMIT or a read) reports a row that then failed alone
   * through `fail`: its write rejects with that error at the COMMIT, and the batch's other writes commit.
   */
  write(work: (fail: (error: Error) => void) => void, statements?: 'one' | 'many'): Promise<void>;
  /**
   * True when none of `writes` (promises this group commit handed out) failed yet: each committed, or waits in the
   * open transaction, which a write called now joins. False when one failed (alone, or with its transaction) or is
   * not known here.
   */
  readonly unfailed: (writes: readonly Promise<void>[]) => boolean;
  /** Why `write` failed, when it did (alone, or with its transaction); undefined while it may still commit. */
  readonly failureOf: (write: Promise<void>) => Error | undefined;
  /** Commit the open transaction now (close, and anything that must be durable before going on). */
  commit(): void;
  /**
   * Call `listener` whenever the open transaction is rolled back (a failed write of several statements, a failed
   * COMMIT), before the batch's other writes run again: what was learned of its writes may be gone.
   */
  onRollback(listener: () => void): void;
  /** Call `listener` right after each transaction begins (before the write that began it runs). */
  onBegin(listener: () => void): void;
  /**
   * Run `hook` in the open transaction just before its COMMIT (rows a store buffered go in then, in one statement);
   * a hook that throws fails the batch as a failed COMMIT does.
   */
  beforeCommit(hook: () => void): void;
  readonly open: boolean;
}

/** A write of the open batch: its work (run again after a rollback) and its promise's settlers. */
interface Waiter {
  readonly work: (fail: (error: Error) => void) => void;
  readonly statements: 'one' | 'many';
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  /** Reports that the write's buffered rows failed alone (see `GroupCommit.write`). */
  readonly fail: (error: Error) => void;
  /** Why the write's buffered rows failed, if they did: it rejects with this at the COMMIT. */
  failure: Error | undefined;
  /** Where the write stands, set as its promise is settled (its handlers run later). */
  state: 'pending' | 'committed' | 'failed';
  /** What it was rejected with, once it was. */
  rejection: Error | undefined;
}

/** A waiter for `work`, and the promise its COMMIT (or its failure, told through `coded`) settles. */
function createWaiter(
  work: Waiter['work'],
  statements: Waiter['statements'],
  coded: (error: unknown) => Error,
): [Waiter, Promise<void>] {
  let settleResolved!: () => void;
  let settleRejected!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    settleResolved = resolve;
    settleRejected = reject;
  });
  const waiter: Waiter = {
    work,
    statements,
    resolve: () => {
      waiter.state = 'committed';
      settleResolved();
    },
    reject: (error) => {
      waiter.state = 'failed';
      waiter.rejection = coded(error);
      settleRejected(waiter.rejection);
    },
    fail: (error) => (waiter.failure ??= error),
    failure: undefined,
    state: 'pending',
    rejection: undefined,
  };
  return [waiter, done];
}

/**
 * A turn that never yields (work chained on promises alone starves setImmediate) would keep its transaction open
 * and its writers waiting: past an age or size the batch commits at its next write instead. The age adapts to the
 * disk: a batch may run `commitsPerBatch` times as long as a COMMIT takes (so COMMITs hold the main thread at most
 * about a fifth of the time), within `minBatchMs`..`maxBatchMs` (the cap bounds what a writer waits for its
 * acknowledgement). A fixed 1 ms made a busy loop commit every millisecond of work (0.42 COMMITs per message in
 * bench/ledger.ts, against 0.13 for the floor).
 */
const minBatchMs = 1;
const maxBatchMs = 4;
const commitsPerBatch = 4;
const maxBatchWrites = 512;

/** How long a batch may stay open, given the average COMMIT time in ms. */
export function batchAgeLimit(commitMs: number): number {
  return Math.min(maxBatchMs, Math.max(minBatchMs, commitMs * commitsPerBatch));
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Group commit: the first write of an event-loop turn opens a transaction, every write of the turn runs in it
 * at once, and one COMMIT at the end of the turn (one fsync under synchronous FULL) makes them all durable and
 * resolves their promises (a batch also commits once it is a few COMMITs' time old or 512 writes long, as soon as
 * the synchronous stretch that wrote it is done). Reads on the same connection see the writes without committing them, so a read never
 * forces an fsync. If COMMIT fails, the whole turn is rolled back and every write of it rejects.
 */
export function createGroupCommit(
  db: Pick<Database.Database, 'exec' | 'inTransaction'>,
  schedule: (commit: () => void) => void,
  now: () => number = () => performance.now(),
  coded: (error: unknown) => Error = asError,
): GroupCommit {
  // The waiter of each promise handed out (and still held by someone): `unfailed` and `failureOf` read it.
  const waiters = new WeakMap<Promise<void>, Waiter>();
  const state: BatchState = {
    waiters: [],
    open: false,
    openedAt: 0,
    early: false,
    commitMs: undefined,
    rolledBack: [],
    began: [],
    committing: [],
  };
  const commit = (): void => commitBatch(db, state, now);
  return {
    write(work, statements = 'many') {
      if (!state.open) beginBatch(db, state, now(), () => schedule(commit));
      const [waiter, done] = createWaiter(work, statements, coded);
      waiters.set(done, waiter);
      try {
        work(waiter.fail);
      } catch (error) {
        // One statement that failed left nothing behind, unless its error rolled the whole transaction back.
        if (statements === 'many' || !db.inTransaction) redoBatch(db, state);
        waiter.reject(asError(error));
        return done;
      }
      state.waiters.push(waiter);
      // Never commit in the middle of a synchronous stretch: writes issued together (open a run and consume its
      // messages; close a run and record run.ended) must land in one transaction, or a crash between them splits
      // them. A microtask runs once the current stretch is done.
      const full = state.waiters.length >= maxBatchWrites;
      if (!state.early && (full || now() - state.openedAt >= batchAgeLimit(state.commitMs ?? 0))) {
        state.early = true;
        queueMicrotask(commit);
      }
      return done;
    },
    commit,
    ...standingOf(waiters),
    onRollback(listener) {
      state.rolledBack.push(listener);
    },
    onBegin(listener) {
      state.began.push(listener);
    },
    beforeCommit(hook) {
      state.committing.push(hook);
    },
    get open() {
      return state.open;
    },
  };
}

/** Open a batch at `now`: BEGIN, schedule its COMMIT, and tell the listeners. */
function beginBatch(
  db: Pick<Database.Database, 'exec'>,
  state: BatchState,
  now: number,
  scheduleCommit: () => void,
): void {
  db.exec('BEGIN IMMEDIATE');
  state.open = true;
  state.openedAt = now;
  scheduleCommit();
  for (const listener of state.began) listener();
}

/** Where the writes of `waiters` stand (see `GroupCommit.unfailed` and `GroupCommit.failureOf`). */
function standingOf(waiters: WeakMap<Promise<void>, Waiter>): Pick<GroupCommit, 'unfailed' | 'failureOf'> {
  return {
    unfailed: (writes) =>
      writes.every((write) => {
        const waiter = waiters.get(write);
        // A pending write waits in the open transaction: a COMMIT settles every write of its batch at once.
        return waiter !== undefined && waiter.state !== 'failed' && waiter.failure === undefined;
      }),
    failureOf: (write) => {
      const waiter = waiters.get(write);
      return waiter?.rejection ?? waiter?.failure;
    },
  };
}

/** The open batch: its writers, when it opened, and the moving average of the COMMIT time (ms) so far. */
interface BatchState {
  waiters: Waiter[];
  open: boolean;
  openedAt: number;
  early: boolean;
  commitMs: number | undefined;
  readonly rolledBack: (() => void)[];
  readonly began: (() => void)[];
  readonly committing: (() => void)[];
}

/** Roll the open transaction back (when it is still open) and tell the listeners. */
function rollBack(db: Pick<Database.Database, 'exec' | 'inTransaction'>, state: BatchState): void {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // The transaction stays open; closing the connection rolls it back.
  }
  for (const listener of state.rolledBack) listener();
}

/**
 * A write of several statements failed part-way: roll the transaction back and run the batch's other writes again
 * in a new one, one at a time, as the Postgres write queue retries a failed batch. They ran before in the same
 * state, so they succeed again unless the file itself fails (a full disk): then the whole batch is rejected with
 * that one error, as a failed COMMIT rejects it.
 */
function redoBatch(db: Pick<Database.Database, 'exec' | 'inTransaction'>, state: BatchState): void {
  const writes = state.waiters;
  rollBack(db, state);
  try {
    db.exec('BEGIN IMMEDIATE');
    for (const listener of state.began) listener();
    for (const waiter of writes) {
      waiter.failure = undefined;
      waiter.work(waiter.fail);
    }
  } catch (error) {
    const failure = asError(error);
    state.waiters = [];
    state.open = false;
    for (const waiter of writes) waiter.reject(failure);
    rollBack(db, state);
  }
}

/** COMMIT the open batch and settle its writers; a failed COMMIT rolls the turn back and rejects them all. */
function commitBatch(
  db: Pick<Database.Database, 'exec' | 'inTransaction'>,
  state: BatchState,
  now: () => number,
): void {
  if (!state.open) return;
  const batch = state.waiters;
  state.waiters = [];
  state.open = false;
  state.early = false;
  const started = now();
  try {
    for (const hook of state.committing) hook();
    db.exec('COMMIT');
  } catch (error) {
    const failure = asError(error);
    // The writers learn of the failure even when the ROLLBACK fails too (a full disk): a lost waiter is a
    // write (and a close() waiting for it) that never settles.
    for (const waiter of batch) waiter.reject(failure);
    rollBack(db, state);
    return;
  }
  const took = now() - started;
  state.commitMs = state.commitMs === undefined ? took : state.commitMs + (took - state.commitMs) / 8;
  for (const waiter of batch) {
    if (waiter.failure === undefined) waiter.resolve();
    else waiter.reject(waiter.failure);
  }
}
