import type { SqliteAccess } from './sqlite-access.js';
import { turnRow } from './sqlite-params.js';
import { toTurnRecord, type TurnRow } from './sqlite-rows.js';
import type { TranscriptStore } from './transcript-store.js';

/** Create the transcript store on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteTranscript({ db, write, read }: SqliteAccess): TranscriptStore {
  const appendTurn = db.prepare(
    `INSERT INTO turns (session_key, run_id, idx, role, content, at, extra)
     VALUES (@session_key, @run_id, @idx, @role, @content, @at, @extra)`,
  );
  const listTurns = db.prepare('SELECT * FROM turns WHERE session_key = ? ORDER BY id');
  const listRunTurns = db.prepare('SELECT * FROM turns WHERE run_id = ? ORDER BY id');
  const lastTurns = db.prepare(
    'SELECT * FROM (SELECT * FROM turns WHERE session_key = ? ORDER BY id DESC LIMIT ?) ORDER BY id',
  );
  return {
    appendTurns: (records) =>
      write(
        () => records.forEach((record) => appendTurn.run(turnRow(record))),
        records.length === 1 ? 'one' : 'many',
      ),
    listTurns: (sessionKey, options) =>
      read(() => {
        const last = options?.last;
        if (last !== undefined && last <= 0) return [];
        const rows = last === undefined ? listTurns.all(sessionKey) : lastTurns.all(sessionKey, last);
        return (rows as TurnRow[]).map(toTurnRecord);
      }),
    listRunTurns: (runId) => read(() => (listRunTurns.all(runId) as TurnRow[]).map(toTurnRecord)),
  };
}
