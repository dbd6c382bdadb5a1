/**
 * The durable floor's store: better-sqlite3 in WAL mode, 3 rows per message (inbox, run, turn), group-committed
 * (one transaction per event-loop turn; a write's promise resolves after its COMMIT), and hibernated sessions
 * loaded in batches (one SELECT for every session asked for in the same turn).
 */
import Database from 'better-sqlite3';
import type { FloorStore } from './floor.js';

const schema = `
  CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, snapshot TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS inbox (session_key TEXT NOT NULL, message_id TEXT NOT NULL, text TEXT NOT NULL,
    status TEXT NOT NULL, received_at INTEGER NOT NULL, PRIMARY KEY (session_key, message_id)) STRICT;
  CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, status TEXT NOT NULL,
    started_at INTEGER NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS turns (run_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL) STRICT;
`;

/** Options of the durable floor store. */
export interface SqliteFloorStoreOptions {
  /** The database file (created when missing). */
  path: string;
  /** SQLite `synchronous` pragma. @default 'full' */
  synchronous?: 'full' | 'normal';
}

interface PendingWrite {
  readonly statement: Database.Statement;
  readonly values: readonly unknown[];
}

/** One transaction per event-loop turn: writes queue up, one COMMIT (one fsync) makes them all durable. */
function createBatcher(db: Database.Database): {
  write(statement: Database.Statement, values: readonly unknown[], wait: boolean): Promise<void> | undefined;
  flush(): void;
} {
  let writes: PendingWrite[] = [];
  let waiters: Array<() => void> = [];
  let scheduled = false;
  const commitAll = db.transaction((batch: PendingWrite[]) => {
    for (const { statement, values } of batch) statement.run(...values);
  });
  function flush(): void {
    scheduled = false;
    const batch = writes;
    const done = waiters;
    writes = [];
    waiters = [];
    if (batch.length > 0) commitAll(batch);
    for (const resolve of done) resolve();
  }
  return {
    write(statement, values, wait) {
      writes.push({ statement, values });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return wait ? new Promise<void>((resolve) => waiters.push(resolve)) : undefined;
    },
    flush,
  };
}

/** Every session asked for in one turn is read with one SELECT. */
function createSnapshotLoader(db: Database.Database): (key: string) => Promise<unknown> {
  const select = db.prepare<[string], { key: string; snapshot: string }>(
    'SELECT key, snapshot FROM sessions WHERE key IN (SELECT value FROM json_each(?))',
  );
  let asked = new Map<string, Array<(snapshot: unknown) => void>>();
  function loadAll(): void {
    const batch = asked;
    asked = new Map();
    const found = new Map<string, string>();
    for (const row of select.all(JSON.stringify([...batch.keys()]))) found.set(row.key, row.snapshot);
    for (const [key, resolvers] of batch) {
      const saved = found.get(key);
      const snapshot: unknown = saved === undefined ? undefined : JSON.parse(saved);
      for (const resolve of resolvers) resolve(snapshot);
    }
  }
  return (key) =>
    new Promise((resolve) => {
      if (asked.size === 0) setImmediate(loadAll);
      const resolvers = asked.get(key);
      if (resolvers === undefined) asked.set(key, [resolve]);
      else resolvers.push(resolve);
    });
}

/** Open (or create) the durable floor's database. */
export function sqliteFloorStore(options: SqliteFloorStoreOptions): FloorStore {
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  db.exec(schema);
  const insertInbox = db.prepare(
    "INSERT INTO inbox (session_key, message_id, text, status, received_at) VALUES (?, ?, ?, 'pending', ?)",
  );
  const insertRun = db.prepare(
    "INSERT INTO runs (run_id, session_key, status, started_at) VALUES (?, ?, 'running', ?)",
  );
  const insertTurn = db.prepare("INSERT INTO turns (run_id, role, content) VALUES (?, 'assistant', ?)");
  const upsertSession = db.prepare(
    'INSERT INTO sessions (key, snapshot) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET snapshot = excluded.snapshot',
  );
  const batcher = createBatcher(db);
  const saveAll = db.transaction((entries: ReadonlyArray<readonly [string, unknown]>) => {
    for (const [key, snapshot] of entries) upsertSession.run(key, JSON.stringify(snapshot));
  });
  return {
    inbox: (sessionKey, messageId, text) =>
      batcher.write(insertInbox, [sessionKey, messageId, text, Date.now()], true),
    runStarted: (runId, sessionKey) => void batcher.write(insertRun, [runId, sessionKey, Date.now()], false),
    runEnded: (runId, text) => batcher.write(insertTurn, [runId, text], true),
    loadSnapshot: createSnapshotLoader(db),
    saveSnapshots: (entries) => {
      batcher.flush();
      saveAll(entries);
    },
    close: () => {
      batcher.flush();
      db.close();
    },
  };
}
