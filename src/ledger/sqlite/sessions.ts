import type { SessionKeyEntry, SessionStore } from '../contract/session-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { sessionRow } from '../sql/params.js';
import { toSessionRecord, type SessionRow } from '../sql/rows.js';

/** Create the session store on the SQLite ledger's connection; a corrupt record is skipped (and reported) in lists. */
export function createSqliteSessions(
  { db, write, readAside }: SqliteAccess,
  corruptRows: CorruptRowLog,
): SessionStore {
  const getSession = db.prepare('SELECT * FROM sessions WHERE session_key = ?');
  const putSession = db.prepare(
    `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at, tool_policy)
     VALUES (@session_key, @override, @snapshot, @epoch, @last_seq, @updated_at, @tool_policy)
     ON CONFLICT (session_key) DO UPDATE SET override = excluded.override, snapshot = excluded.snapshot,
       epoch = excluded.epoch, last_seq = excluded.last_seq, updated_at = excluded.updated_at,
       tool_policy = excluded.tool_policy`,
  );
  const listSessions = db.prepare('SELECT * FROM sessions');
  const listKeys = db.prepare(
    `SELECT session_key AS sessionKey, updated_at AS updatedAt FROM sessions
     WHERE @after IS NULL OR session_key > @after ORDER BY session_key LIMIT @limit`,
  );
  // No row of the sessions table is ever buffered: its reads leave the others' buffered rows buffered.
  const read = <T>(work: () => T): Promise<T> => readAside(work);
  return {
    getSession: (sessionKey) =>
      read(() => {
        const row = getSession.get(sessionKey) as SessionRow | undefined;
        return row === undefined ? undefined : toSessionRecord(row);
      }),
    putSession: (record) => write(() => putSession.run(sessionRow(record)), 'one'),
    listSessions: () => read(() => corruptRows.readEach(listSessions.all() as SessionRow[], toSessionRecord)),
    listSessionKeys: ({ after, limit }) =>
      read(() => listKeys.all({ after: after ?? null, limit }) as SessionKeyEntry[]),
  };
}
