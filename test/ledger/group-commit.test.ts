import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { batchAgeLimit, createGroupCommit } from '../../src/ledger/sqlite/group-commit.js';

/** A database that only records its statements; COMMIT takes `commitMs` of the fake time. */
function fakeDatabase(time: { now: number }, commitMs: number) {
  const statements: string[] = [];
  const db = {
    inTransaction: false,
    exec(sql: string) {
      statements.push(sql);
      if (sql === 'COMMIT') time.now += commitMs;
      return db;
    },
  };
  return { db: db as unknown as Parameters<typeof createGroupCommit>[0], statements };
}

/** Let the microtasks queued so far run (an early commit is one). */
const microtasks = (): Promise<void> => new Promise((resolve) => queueMicrotask(resolve));

describe('batchAgeLimit', () => {
  it('lets a batch run four COMMITs long within 1 to 4 ms when given the COMMIT time', () => {
    expect(batchAgeLimit(0)).toBe(1);
    expect(batchAgeLimit(0.05)).toBe(1);
    expect(batchAgeLimit(0.5)).toBe(2);
    expect(batchAgeLimit(5)).toBe(4);
  });
});

describe('createGroupCommit', () => {
  it('keeps a batch open past 1 ms when COMMITs on this disk take 0.75 ms', async () => {
    const time = { now: 0 };
    const { db, statements } = fakeDatabase(time, 0.75);
    const scheduled: Array<() => void> = [];
    const commits = createGroupCommit(
      db,
      (commit) => scheduled.push(commit),
      () => time.now,
    );
    const first = commits.write(() => undefined, 'one');
    scheduled.shift()?.();
    await first;
    commits.write(() => undefined, 'one').catch(() => undefined);
    time.now += 2;
    commits.write(() => undefined, 'one').catch(() => undefined);
    await microtasks();
    expect(statements.filter((sql) => sql === 'COMMIT')).toHaveLength(1);
    time.now += 1;
    const late = commits.write(() => undefined, 'one');
    await microtasks();
    expect(statements.filter((sql) => sql === 'COMMIT')).toHaveLength(2);
    await late;
  });

  it('commits a batch early once it is older than the limit, before the end of the turn', async () => {
    const time = { now: 0 };
    const { db, statements } = fakeDatabase(time, 0);
    const commits = createGroupCommit(
      db,
      () => undefined,
      () => time.now,
    );
    const first = commits.write(() => undefined, 'one');
    time.now += 1;
    const second = commits.write(() => undefined, 'one');
    await Promise.all([first, second]);
    expect(statements).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
  });
});

/** An in-memory database seen through exec and inTransaction only (no db.transaction: no savepoints), recording exec. */
function realDatabase() {
  const raw = new Database(':memory:');
  raw.exec('CREATE TABLE t (x INTEGER NOT NULL)');
  const execs: string[] = [];
  const db = {
    exec(sql: string) {
      execs.push(sql);
      raw.exec(sql);
      return db;
    },
    get inTransaction() {
      return raw.inTransaction;
    },
  };
  const insert = raw.prepare('INSERT INTO t (x) VALUES (?)');
  const rows = () => raw.prepare('SELECT x FROM t ORDER BY rowid').pluck().all();
  return { db: db as unknown as Parameters<typeof createGroupCommit>[0], execs, insert, rows };
}

describe('createGroupCommit, a failed write', () => {
  it('rolls back a write of several statements that failed part-way and redoes the others, with no savepoint', async () => {
    const { db, execs, insert, rows } = realDatabase();
    const scheduled: Array<() => void> = [];
    const commits = createGroupCommit(db, (commit) => scheduled.push(commit));
    let rollbacks = 0;
    commits.onRollback(() => rollbacks++);
    const first = commits.write(() => insert.run(1), 'one');
    const broken = commits.write(() => {
      insert.run(2);
      insert.run(null);
    });
    const third = commits.write(() => insert.run(3), 'one');
    scheduled.shift()?.();
    await expect(broken).rejects.toThrow(/NOT NULL/);
    await Promise.all([first, third]);
    expect(rows()).toEqual([1, 3]);
    expect(rollbacks).toBe(1);
    expect(execs).toEqual(['BEGIN IMMEDIATE', 'ROLLBACK', 'BEGIN IMMEDIATE', 'COMMIT']);
  });

  it('rejects alone a single statement that failed, without a rollback', async () => {
    const { db, execs, insert, rows } = realDatabase();
    const scheduled: Array<() => void> = [];
    const commits = createGroupCommit(db, (commit) => scheduled.push(commit));
    const first = commits.write(() => insert.run(1), 'one');
    const failed = commits.write(() => insert.run(null), 'one');
    scheduled.shift()?.();
    await expect(failed).rejects.toThrow(/NOT NULL/);
    await first;
    expect(rows()).toEqual([1]);
    expect(execs).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
  });

  it('rejects the whole batch with one error when a write fails again as it is redone (a full disk)', async () => {
    const { db, insert, rows } = realDatabase();
    const scheduled: Array<() => void> = [];
    const commits = createGroupCommit(db, (commit) => scheduled.push(commit));
    let runs = 0;
    const fragile = commits.write(() => {
      runs++;
      insert.run(runs === 1 ? 1 : null);
      insert.run(10);
    });
    const kept = commits.write(() => insert.run(2), 'one');
    const broken = commits.write(() => {
      insert.run(3);
      insert.run(null);
    });
    scheduled.shift()?.();
    await expect(broken).rejects.toThrow(/NOT NULL/);
    const failures = await Promise.all([
      fragile.catch((error: unknown) => error),
      kept.catch((error: unknown) => error),
    ]);
    expect(failures[0]).toBeInstanceOf(Error);
    expect(failures[1]).toBe(failures[0]);
    expect(rows()).toEqual([]);
    const after = commits.write(() => insert.run(4), 'one');
    scheduled.shift()?.();
    await after;
    expect(rows()).toEqual([4]);
  });
});

describe('createGroupCommit, where its writes stand', () => {
  it('knows at once which writes may still commit, and why one failed: alone, or with its COMMIT', async () => {
    const { db, insert } = realDatabase();
    const scheduled: Array<() => void> = [];
    const commits = createGroupCommit(db, (commit) => scheduled.push(commit));
    const pending = commits.write(() => insert.run(1), 'one');
    const refused = commits.write(() => insert.run(null), 'one');
    expect(commits.unfailed([pending])).toBe(true);
    expect(commits.failureOf(pending)).toBeUndefined();
    expect(commits.unfailed([pending, refused])).toBe(false);
    expect(commits.failureOf(refused)?.message).toMatch(/NOT NULL/);
    await expect(refused).rejects.toThrow(/NOT NULL/);
    scheduled.shift()?.();
    await pending;
    expect(commits.unfailed([pending])).toBe(true);
    let diskFull = false;
    commits.beforeCommit(() => {
      if (diskFull) throw new Error('disk full');
    });
    const lost = commits.write(() => insert.run(2), 'one');
    diskFull = true;
    scheduled.shift()?.();
    // Known as the COMMIT failed, before the write's own handlers ran.
    expect(commits.unfailed([lost])).toBe(false);
    expect(commits.failureOf(lost)?.message).toBe('disk full');
    await expect(lost).rejects.toThrow('disk full');
    expect(commits.unfailed([Promise.resolve()])).toBe(false);
    expect(commits.failureOf(Promise.resolve())).toBeUndefined();
  });

  it('rejects each write with its failure as `coded` says it', async () => {
    const { db, insert } = realDatabase();
    const scheduled: Array<() => void> = [];
    const coded = (error: unknown) => new Error(`coded: ${(error as Error).message}`);
    const commits = createGroupCommit(db, (commit) => scheduled.push(commit), undefined, coded);
    const refused = commits.write(() => insert.run(null), 'one');
    await expect(refused).rejects.toThrow(/^coded: NOT NULL/);
    expect(commits.failureOf(refused)?.message).toMatch(/^coded: NOT NULL/);
    const kept = commits.write(() => insert.run(1), 'one');
    scheduled.shift()?.();
    await kept;
  });
});
