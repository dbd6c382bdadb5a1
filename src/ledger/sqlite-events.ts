import type { EventStore } from './event-store.js';
import type { SqliteAccess } from './sqlite-access.js';
import type { CorruptRowLog } from './sqlite-corrupt-rows.js';
import { readEventRow } from './sqlite-event-rows.js';
import type { SqliteEventWriter } from './sqlite-event-writer.js';
import type { EventRow } from './sqlite-rows.js';

function prepareEventStatements(db: SqliteAccess['db']) {
  const prepare = (sql: string) => db.prepare(sql);
  return {
    readEvents: prepare('SELECT * FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?'),
    readSessionEvents: prepare(
      'SELECT * FROM events WHERE session_key = ? AND cursor > ? ORDER BY cursor LIMIT ?',
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
  const maxCursor = (): number => (sql.maxCursor.get() as { cursor: number | null }).cursor ?? 0;
  return {
    appendEvents: (events) => writer.append(events),
    readEvents: (query) =>
      read(() => {
        const after = query.after ?? 0;
        const limit = query.limit ?? -1;
        const rows =
          query.sessionKey === undefined
            ? sql.readEvents.all(after, limit)
            : sql.readSessionEvents.all(query.sessionKey, after, limit);
        return (rows as EventRow[]).map((row) => {
          const { event, problem } = readEventRow(row);
          if (problem !== undefined) corruptRows.report(problem);
          return event;
        });
      }),
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
