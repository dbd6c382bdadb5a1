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
    transaction: <T>(work: () => T) => work,
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
