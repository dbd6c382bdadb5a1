import { RuntimeError } from '../../core/index.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { turnRow } from '../sql/params.js';
import { toTurnRecord, type TurnRow } from '../sql/rows.js';
import {
  readStretches,
  toFork,
  transcriptStretches,
  type ForkRow,
  type OwnTurns,
} from '../contract/transcript-forks.js';
import type { TranscriptFork, TranscriptStore, TurnRecord } from '../contract/transcript-store.js';
import { createTurnCache, type TurnCache } from './turn-cache.js';
import { statementsByRows, valueTuples, type RowBatchKind } from './row-batches.js';

/** SQLite's LIMIT for "no limit". */
const noLimit = -1;

/** The statements that read a forked transcript: a stretch of a session's own turns, and a session's fork. */
function prepareReads(db: SqliteAccess['db'], corruptRows: CorruptRowLog) {
  const firstTurns = db.prepare('SELECT * FROM turns WHERE session_key = ? ORDER BY id LIMIT ?');
  const lastOfFirst = db.prepare(
    `SELECT * FROM (SELECT * FROM (SELECT * FROM turns WHERE session_key = ? ORDER BY id LIMIT ?)
     ORDER BY id DESC LIMIT ?) ORDER BY id`,
  );
  const getFork = db.prepare('SELECT * FROM session_forks WHERE session_key = ?');
  const forkOf = (sessionKey: string): TranscriptFork | undefined => {
    const row = getFork.get(sessionKey) as ForkRow | undefined;
    return row === undefined ? undefined : toFork(row);
  };
  const own = ({ sessionKey, limit }: OwnTurns, last: number | undefined) => {
    const upTo = limit ?? noLimit;
    const rows =
      last === undefined ? firstTurns.all(sessionKey, upTo) : lastOfFirst.all(sessionKey, upTo, last);
    return corruptRows.readAll(rows as TurnRow[], toTurnRecord);
  };
  return { forkOf, own };
}

const turnColumns = ['session_key', 'run_id', 'idx', 'role', 'content', 'at', 'extra'] as const;

/** Turns appended, inserted together in call order (their ids keep it); the cache learns each as it is buffered. */
function appendKind(db: SqliteAccess['db'], cache: TurnCache): RowBatchKind<TurnRecord> {
  const many = statementsByRows(
    db,
    (rows) => `INSERT INTO turns (${turnColumns.join(', ')}) VALUES ${valueTuples(rows, turnColumns.length)}`,
  );
  const values = (record: TurnRecord) => {
    const row = turnRow(record);
    return turnColumns.map((column) => row[column]);
  };
  return {
    phase: 'insert',
    writeMany: (records) => many(records.length).run(records.flatMap(values)).changes === records.length,
    writeOne: (record) => many(1).run(values(record)),
    buffered: (record) => cache.appended(record),
    // The cache holds a turn the file does not: it learns the session again from the file.
    failed: () => cache.clear(),
  };
}

/**
 * Create the transcript store on the SQLite ledger's connection (its schema is already migrated). A corrupt turn
 * is reported once and fails the read: a run must not go on with a hole in its history.
 */
export function createSqliteTranscript(
  { db, write, batched, read, readAside, cacheOf }: SqliteAccess,
  corruptRows: CorruptRowLog,
): TranscriptStore {
  const cache = createTurnCache();
  const current = cacheOf(() => cache.clear());
  const appendTurns = batched(appendKind(db, cache));
  const listRunTurns = prepareRunTurns(db);
  const hasTurns = db.prepare('SELECT 1 FROM turns WHERE session_key = ? LIMIT 1');
  const insertFork = db.prepare(
    `INSERT INTO session_forks (session_key, parent_key, turns, up_to_run_id, at)
     VALUES (@session_key, @parent_key, @turns, @up_to_run_id, @at)`,
  );
  const { forkOf, own } = prepareReads(db, corruptRows);
  const listTurns = cachedListTurns(cache, forkOf, own);
  const addFork = (fork: TranscriptFork): void => {
    if (forkOf(fork.sessionKey) !== undefined || hasTurns.get(fork.sessionKey) !== undefined) {
      throw new RuntimeError('invalid_input', `fork: session ${fork.sessionKey} already has a transcript`);
    }
    insertFork.run({
      session_key: fork.sessionKey,
      parent_key: fork.parentKey,
      turns: fork.turns,
      up_to_run_id: fork.upToRunId ?? null,
      at: fork.at,
    });
    cache.forked(fork);
  };
  return {
    appendTurns: (records) => appendTurns(records),
    listTurns: (sessionKey, options) =>
      readAside((flushRows) => {
        current();
        return listTurns(sessionKey, options?.last, flushRows);
      }),
    listRunTurns: (runId) => read(() => corruptRows.readAll(listRunTurns(runId), toTurnRecord)),
    forkTranscript: (fork) => write(() => addFork(fork), 'many'),
    getFork: (sessionKey) =>
      // session_forks has no buffered rows (a fork is written at once).
      readAside(() => {
        current();
        const known = cache.fork(sessionKey);
        return known === 'unknown' ? forkOf(sessionKey) : known;
      }),
  };
}

/**
 * A session's transcript (its latest `last` turns), from the cache when it holds them; a read of the file fills the
 * cache for a session that is not a fork.
 */
function cachedListTurns(
  cache: TurnCache,
  forkOf: (sessionKey: string) => TranscriptFork | undefined,
  own: (stretch: OwnTurns, last: number | undefined) => TurnRecord[],
): (sessionKey: string, last: number | undefined, flushRows: () => void) => TurnRecord[] {
  return (sessionKey, last, flushRows) => {
    if (last !== undefined && last <= 0) return [];
    const cached = cache.turns(sessionKey, last);
    if (cached !== undefined) return cached;
    // The file is read: the turns still buffered go in first.
    flushRows();
    const known = cache.fork(sessionKey);
    const fork = known === 'unknown' ? forkOf(sessionKey) : known;
    const stretches = transcriptStretches(sessionKey, (key) => (key === sessionKey ? fork : forkOf(key)));
    const found = readStretches(stretches, own, last);
    cache.learn(sessionKey, fork, found, last === undefined || found.length < last);
    return found;
  };
}

/**
 * A run's turns, found through its session's (`turns_by_session`: there is no index of turns by run), the session
 * read from the run's row; turns of a run without a row (never written by the runtime) are found by a scan.
 */
function prepareRunTurns(db: SqliteAccess['db']): (runId: string) => TurnRow[] {
  const runSession = db.prepare('SELECT session_key FROM runs WHERE run_id = ?').pluck();
  const bySession = db.prepare('SELECT * FROM turns WHERE session_key = ? AND run_id = ? ORDER BY id');
  const byScan = db.prepare('SELECT * FROM turns WHERE run_id = ? ORDER BY id');
  return (runId) => {
    const sessionKey = runSession.get(runId) as string | undefined;
    const rows = sessionKey === undefined ? byScan.all(runId) : bySession.all(sessionKey, runId);
    return rows as TurnRow[];
  };
}
