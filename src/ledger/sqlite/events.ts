import type { RuntimeEvent } from '../../core/index.js';
import { eventsWithin, pageCoverage } from '../sql/delta-rows.js';
import type { EventQuery, EventStore } from '../contract/event-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { readEventRow } from '../sql/event-rows.js';
import type { SqliteEventWriter } from './event-writer.js';
import type { EventRow } from '../sql/rows.js';

function prepareEventStatements(db: SqliteAccess['db']) {
  const prepare = (sql: string) => db.prepare(sql);
  return {
    readEvents: prepare('SELECT * FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?'),
    readSessionEvents: prepare(
      'SELECT * FROM events WHERE session_key = ? AND cursor > ? ORDER BY cursor LIMIT ?',
    ),
    // Rows stored beyond a page that may hold some of its tokens (see delta-rows.ts).
    readDeltas: prepare(
      "SELECT * FROM events WHERE cursor > ? AND cursor <= ? AND type = 'assistant.delta' ORDER BY cursor",
    ),
    readSessionDeltas: prepare(
      `SELECT * FROM events WHERE session_key = ? AND cursor > ? AND cursor <= ? AND type = 'assistant.delta'
       ORDER BY cursor`,
    ),
    maxCursor: prepare('SELECT max(cursor) AS cursor FROM events'),
    getMeta: prepare('SELECT value FROM meta WHERE key = ?'),
    putMeta: prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    // Pruning must not lower a session's seq: the highest one of what goes is kept aside.
    markSeqs: prepare(
      `INSERT INTO seq_marks (session_key, last_seq) SELECT session_key, max(seq) FROM events WHERE at < ? GROUP BY session_key
       ON CONFLICT (session_key) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)`,
    ),
    pruneEvents: prepare('DELETE FROM events WHERE at < ?'),
  };
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
  const parse = (rows: unknown[]): RuntimeEvent[] =>
    (rows as EventRow[]).map((row) => {
      const { event, problem } = readEventRow(row);
      if (problem !== undefined) corruptRows.report(problem);
      return event;
    });
  const readPage = (query: EventQuery): RuntimeEvent[] => {
    const after = query.after ?? 0;
    const { sessionKey } = query;
    const rows = parse(
      sessionKey === undefined
        ? sql.readEvents.all(after, query.limit ?? -1)
        : sql.readSessionEvents.all(sessionKey, after, query.limit ?? -1),
    );
    const { until, extra } = pageCoverage({ ...query, after }, rows);
    if (extra !== undefined) {
      rows.push(
        ...parse(
          sessionKey === undefined
            ? sql.readDeltas.all(extra.after, extra.until)
            : sql.readSessionDeltas.all(sessionKey, extra.after, extra.until),
        ),
      );
    }
    return eventsWithin(rows, after, until);
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
          sql.markSeqs.run(before);
          return sql.pruneEvents.run(before).changes;
        })(),
      ),
  };
}
