import type { RuntimeEvent } from '../../core/index.js';
import { eventsWithin, pageCoverage } from '../sql/delta-rows.js';
import type { EventQuery, EventStore } from '../contract/event-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { parseEventRows, prunePack } from '../sql/event-rows.js';
import { storedForm, type SqliteEventWriter } from './event-writer.js';
import type { EventRow } from '../sql/rows.js';
import { packEntries, packTimeSpan, packType } from '../sql/event-packs.js';

function prepareEventStatements(db: SqliteAccess['db']) {
  const prepare = (sql: string) => db.prepare(sql);
  return {
    readEvents: prepare('SELECT * FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?'),
    readSessionEvents: prepare(
      'SELECT * FROM events WHERE session_key = ? AND cursor > ? ORDER BY cursor LIMIT ?',
    ),
    // Rows stored beyond a page that may hold some of its tokens or packed events (see delta-rows.ts).
    readDeltas: prepare(
      `SELECT * FROM events WHERE cursor > ? AND cursor <= ? AND type IN ('assistant.delta', '${packType}')
       ORDER BY cursor`,
    ),
    readSessionDeltas: prepare(
      `SELECT * FROM events WHERE session_key = ? AND cursor > ? AND cursor <= ?
         AND type IN ('assistant.delta', '${packType}') ORDER BY cursor`,
    ),
    maxCursor: prepare('SELECT max(cursor) AS cursor FROM events'),
    getMeta: prepare('SELECT value FROM meta WHERE key = ?'),
    putMeta: prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    // The rows older than a time lie at or below the last cursor of the transactions that wrote anything older
    // (event_times): found by cursor, with no index of events by time.
    upTo: prepare('SELECT coalesce(max(last_cursor), 0) AS cursor FROM event_times WHERE min_at < ?'),
    // Pruning must not lower a session's seq: the highest one of what goes is kept aside.
    markSeqs: prepare(
      `INSERT INTO seq_marks (session_key, last_seq)
         SELECT session_key, max(seq) FROM events WHERE cursor <= @upTo AND at < @before GROUP BY session_key
       ON CONFLICT (session_key) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)`,
    ),
    pruneEvents: prepare('DELETE FROM events WHERE cursor <= @upTo AND at < @before'),
    // The rows pruneEvents deletes: how many ordinary ones, and the packs (counted by their entries, in code).
    countPruned: prepare(
      `SELECT count(*) AS count FROM events WHERE cursor <= @upTo AND at < @before AND type != '${packType}'`,
    ),
    prunedPacks: prepare(
      `SELECT body FROM events WHERE cursor <= @upTo AND at < @before AND type = '${packType}'`,
    ),
    straddling: prepare(
      `SELECT * FROM events WHERE cursor <= @upTo AND type = '${packType}' AND at >= @before AND at < @until`,
    ),
    // A transaction's range whose every row went is forgotten.
    pruneTimes: prepare('DELETE FROM event_times WHERE max_at < ?'),
    deleteRow: prepare('DELETE FROM events WHERE cursor = ?'),
    insertRow: prepare(
      'INSERT INTO events (cursor, session_key, seq, type, run_id, at, body) VALUES (@cursor, @session_key, @seq, @type, @run_id, @at, @body)',
    ),
    markSeq: prepare(
      `INSERT INTO seq_marks (session_key, last_seq) VALUES (?, ?)
       ON CONFLICT (session_key) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)`,
    ),
  };
}

/**
 * Prune the events older than `before` out of the packs that also hold newer ones: each such pack is rewritten with
 * its newer events only (the seq of what went kept aside, as for whole rows). A pack that does not read back whole
 * (a corrupt row) is left as it is. Resolves how many events went.
 */
function pruneStraddling(sql: ReturnType<typeof prepareEventStatements>, before: number): number {
  let pruned = 0;
  const until = before + packTimeSpan;
  const upTo = (sql.upTo.get(until) as { cursor: number }).cursor;
  for (const row of sql.straddling.all({ upTo, before, until }) as EventRow[]) {
    const split = prunePack(row, before);
    if (split === undefined) continue;
    sql.deleteRow.run(row.cursor);
    for (const kept of storedForm(split.kept)) sql.insertRow.run(kept);
    sql.markSeq.run(row.session_key, split.goneSeq);
    pruned += split.gone;
  }
  return pruned;
}

/**
 * Create the event store on the SQLite ledger's connection: appends go through the connection's event writer; a
 * corrupt row is read as a `ledger.corrupt` marker in its place (and reported).
 */
export function createSqliteEvents(
  { db, readEventLog: read }: SqliteAccess,
  writer: SqliteEventWriter,
  corruptRows: CorruptRowLog,
): EventStore {
  const sql = prepareEventStatements(db);
  const parse = (rows: unknown[]): RuntimeEvent[] => parseEventRows(rows as EventRow[], corruptRows);
  const readPage = (query: EventQuery): RuntimeEvent[] => {
    const after = query.after ?? 0;
    const { sessionKey } = query;
    const rows = (
      sessionKey === undefined
        ? sql.readEvents.all(after, query.limit ?? -1)
        : sql.readSessionEvents.all(sessionKey, after, query.limit ?? -1)
    ) as EventRow[];
    const events = parse(rows);
    const { until, extra } = pageCoverage(
      { ...query, after },
      { rows: rows.length, last: rows.at(-1)?.cursor },
    );
    if (extra !== undefined) {
      events.push(
        ...parse(
          sessionKey === undefined
            ? sql.readDeltas.all(extra.after, extra.until)
            : sql.readSessionDeltas.all(sessionKey, extra.after, extra.until),
        ),
      );
    }
    return eventsWithin(events, { after, until, limit: query.limit });
  };
  const maxCursor = (): number => (sql.maxCursor.get() as { cursor: number | null }).cursor ?? 0;
  return {
    appendEvents: (events) => writer.append(events),
    readEvents: (query) => read(() => readPage(query)),
    lastCursor: () =>
      read(() => {
        const pruned = Number((sql.getMeta.get('last_cursor') as { value: string } | undefined)?.value ?? 0);
        return Math.max(pruned, maxCursor());
      }),
    pruneEvents: (before) =>
      read(() =>
        db.transaction(() => {
          sql.putMeta.run('last_cursor', String(Math.max(maxCursor(), writer.lastAppended())));
          const upTo = (sql.upTo.get(before) as { cursor: number }).cursor;
          sql.markSeqs.run({ upTo, before });
          const { count } = sql.countPruned.get({ upTo, before }) as { count: number };
          const packs = sql.prunedPacks.pluck().all({ upTo, before }) as string[];
          const packed = packs.reduce((sum, body) => sum + packEntries(body), 0);
          sql.pruneEvents.run({ upTo, before });
          const pruned = count + packed + pruneStraddling(sql, before);
          sql.pruneTimes.run(before);
          return pruned;
        })(),
      ),
  };
}
