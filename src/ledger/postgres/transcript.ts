import { RuntimeError } from '../../core/index.js';
import type { PostgresAccess } from './access.js';
import { gatherRows, type PostgresQuery, type RowStatement } from './queue.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { turnRow } from '../sql/params.js';
import { toTurnRecord, type TurnRow } from '../sql/rows.js';
import { toFork, transcriptStretches, type ForkRow, type OwnTurns } from '../contract/transcript-forks.js';
import type { TranscriptStore, TurnRecord } from '../contract/transcript-store.js';
import type { TurnCache } from '../sqlite/turn-cache.js';

/**
 * What the transcript keeps in memory: the connection's cache of the latest turns (kept by every append of the
 * connection, fenced or not), and whether this store may answer from it (`answers`): only where this process is the
 * one writer of the session's turns (see `createPostgresLedger`).
 */
export interface TranscriptMemory {
  readonly cache: TurnCache;
  readonly answers: () => boolean;
}

/** A session's fork and its ancestors' in one statement (UNION stops at a cycle a corrupt row could make). */
const forkChainSql = `WITH RECURSIVE chain AS (
    SELECT * FROM session_forks WHERE session_key = $1
    UNION SELECT f.* FROM session_forks f JOIN chain ON f.session_key = chain.parent_key)
  SELECT * FROM chain`;
const firstTurnsSql = 'SELECT * FROM turns WHERE session_key = $1 ORDER BY id LIMIT $2';
const lastOfFirstSql = `SELECT * FROM (SELECT * FROM (SELECT * FROM turns WHERE session_key = $1 ORDER BY id LIMIT $2) AS f
    ORDER BY id DESC LIMIT $3) AS l ORDER BY id`;
// A session's own turns (its latest $2, all when NULL) and whether it is a fork, in one statement: the transcript of a
// session that is no fork (the common case) is read in one round trip instead of two.
const unforkedTurnsSql = `SELECT f.forked, t.* FROM
    (SELECT EXISTS (SELECT 1 FROM session_forks WHERE session_key = $1) AS forked) AS f
    LEFT JOIN LATERAL (SELECT * FROM turns WHERE session_key = $1 ORDER BY id DESC LIMIT $2) AS t ON true
  ORDER BY t.id`;
// One statement, so two forks of one session at once cannot both land: the key refuses the second.
const insertForkSql = `INSERT INTO session_forks (session_key, parent_key, turns, up_to_run_id, at)
  SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM turns WHERE session_key = $1)
  ON CONFLICT (session_key) DO NOTHING`;
const turnColumns = ['session_key', 'run_id', 'idx', 'role', 'content', 'at', 'extra'] as const;
/** Turn rows, gathered from every append of a transaction into one statement (see `gatherRows`). */
const insertTurnsSql: RowStatement = {
  sql: `INSERT INTO turns (${turnColumns.join(', ')})
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[])`,
  table: 'turns',
};

/** One stretch of own turns: its first `limit`, or the latest `last` of those. */
async function ownTurns(
  query: PostgresQuery,
  corruptRows: CorruptRowLog,
  { sessionKey, limit }: OwnTurns,
  last?: number,
): Promise<TurnRecord[]> {
  const { rows } =
    last === undefined
      ? await query<TurnRow>(firstTurnsSql, [sessionKey, limit ?? null])
      : await query<TurnRow>(lastOfFirstSql, [sessionKey, limit ?? null, last]);
  return corruptRows.readAll(rows, toTurnRecord);
}

/** A session's transcript through its forks (the async twin of `readStretches`). */
async function listTurns(
  query: PostgresQuery,
  corruptRows: CorruptRowLog,
  cache: TurnCache,
  sessionKey: string,
  last?: number,
): Promise<TurnRecord[]> {
  const own = await query<{ forked: boolean } & TurnRow>(unforkedTurnsSql, [sessionKey, last ?? null]);
  if (own.rows[0]?.forked !== true) {
    // The row of a session with no turn carries only `forked`.
    const turns = corruptRows.readAll(
      own.rows.filter((row) => row.session_key !== null),
      toTurnRecord,
    );
    cache.learn(sessionKey, undefined, turns, last === undefined || turns.length < last);
    return turns;
  }
  const forks = new Map(
    (await query<ForkRow>(forkChainSql, [sessionKey])).rows.map((row) => [row.session_key, row]),
  );
  const stretches = transcriptStretches(sessionKey, (key) => {
    const row = forks.get(key);
    return row === undefined ? undefined : toFork(row);
  });
  const parts: TurnRecord[][] = [];
  let remaining = last;
  for (let index = stretches.length - 1; index >= 0 && (remaining === undefined || remaining > 0); index--) {
    const part = await ownTurns(query, corruptRows, stretches[index] as OwnTurns, remaining);
    parts.unshift(part);
    if (remaining !== undefined) remaining -= part.length;
  }
  return parts.flat();
}

/**
 * Create the transcript store on the Postgres ledger; a fork is one row, whatever its parent's length. A corrupt
 * turn is reported once and fails the read. A session's latest turns are answered from memory where `memory` allows
 * it (so a run's start reads nothing), in the queue, after the writes called before the read.
 */
export function createPostgresTranscript(
  { write, read }: PostgresAccess,
  corruptRows: CorruptRowLog,
  { cache, answers }: TranscriptMemory,
): TranscriptStore {
  return {
    appendTurns: (records) =>
      write(async (query) => {
        if (records.length === 0) return;
        const rows = records.map(turnRow);
        await gatherRows(
          query,
          insertTurnsSql,
          turnColumns.map((column) => rows.map((row) => row[column])),
        );
        // In the transaction: a rollback clears the cache (see `PostgresQueueDeps.rolledBack`).
        for (const record of records) cache.appended(record);
      }),
    listTurns: (sessionKey, options) => {
      const last = options?.last;
      return read((query) => {
        if (last !== undefined && last <= 0) return Promise.resolve([]);
        const known = answers() ? cache.turns(sessionKey, last) : undefined;
        return known === undefined
          ? listTurns(query, corruptRows, cache, sessionKey, last)
          : Promise.resolve(known);
      });
    },
    listRunTurns: (runId) =>
      read(async (query) =>
        corruptRows.readAll(
          (await query<TurnRow>('SELECT * FROM turns WHERE run_id = $1 ORDER BY id', [runId])).rows,
          toTurnRecord,
        ),
      ),
    forkTranscript: (fork) =>
      write(async (query) => {
        const values = [fork.sessionKey, fork.parentKey, fork.turns, fork.upToRunId ?? null, fork.at];
        if ((await query(insertForkSql, values)).rowCount === 0) {
          throw new RuntimeError(
            'invalid_input',
            `fork: session ${fork.sessionKey} already has a transcript`,
          );
        }
        cache.forked(fork);
      }),
    getFork: (sessionKey) =>
      read(async (query) => {
        const { rows } = await query<ForkRow>('SELECT * FROM session_forks WHERE session_key = $1', [
          sessionKey,
        ]);
        return rows[0] === undefined ? undefined : toFork(rows[0]);
      }),
  };
}
