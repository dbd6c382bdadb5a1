import type { InboxStore } from '../contract/inbox-store.js';
import type { SqliteAccess } from './access.js';
import { inboxColumns, inboxRow } from '../sql/params.js';
import { constraint, toInboxRecord, type InboxRow } from '../sql/rows.js';
import { statementsByRows, valueTuples, type RowBatchKind } from './row-batches.js';

type Row = ReturnType<typeof inboxRow>;

/** A status change of one message (the newest record of its id). */
interface UpdateRow {
  readonly session_key: string;
  readonly message_id: string;
  readonly status: string;
  readonly run_id: string | null;
  readonly summary: string | null;
}

/** A message's records share this key: its updates go in after its insert, in the order they were called. */
const messageKey = (row: { session_key: string; message_id: string }): string =>
  `${row.session_key}\u0000${row.message_id}`;

/** Accepted messages, inserted together (a duplicate order fails its own write alone). */
function insertKind(db: SqliteAccess['db']): RowBatchKind<Row> {
  const many = statementsByRows(
    db,
    (rows) =>
      `INSERT INTO inbox (${inboxColumns.join(', ')}) VALUES ${valueTuples(rows, inboxColumns.length)}`,
  );
  const one = many(1);
  const values = (row: Row) => inboxColumns.map((column) => row[column]);
  return {
    phase: 'insert',
    key: messageKey,
    writeMany: (rows) => many(rows.length).run(rows.flatMap(values)).changes === rows.length,
    writeOne: (row) =>
      constraint(`inbox order ${row.ord} of "${row.session_key}"`, () => one.run(values(row)))(),
  };
}

/**
 * Status changes, written together: each goes to the newest record of its message id (a platform id accepted
 * again after the dedupe window is a second record), found by walking its session's inbox back from the newest.
 */
function updateKind(db: SqliteAccess['db']): RowBatchKind<UpdateRow> {
  const many = statementsByRows(
    db,
    (rows) =>
      `UPDATE inbox SET status = v.column3, run_id = coalesce(v.column4, inbox.run_id),
         summary = coalesce(v.column5, inbox.summary)
       FROM (VALUES ${valueTuples(rows, 5)}) AS v
       WHERE inbox.session_key = v.column1
         AND inbox.ord = (SELECT ord FROM inbox AS newest WHERE newest.session_key = v.column1
           AND newest.message_id = v.column2 ORDER BY ord DESC LIMIT 1)`,
  );
  const values = (row: UpdateRow) => [row.session_key, row.message_id, row.status, row.run_id, row.summary];
  return {
    phase: 'update',
    key: messageKey,
    // Ids not in the inbox are ignored: fewer changes than rows is no failure.
    writeMany: (rows) => {
      many(rows.length).run(rows.flatMap(values));
      return true;
    },
    writeOne: (row) => many(1).run(values(row)),
  };
}

/** Create the inbox store on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteInbox({ db, batched, read }: SqliteAccess): InboxStore {
  const appendMessages = batched(insertKind(db));
  const updateMessages = batched(updateKind(db));
  const listMessages = db.prepare('SELECT * FROM inbox WHERE session_key = ? ORDER BY ord');
  return {
    appendMessage: (record) => appendMessages([inboxRow(record)]),
    updateMessages: (sessionKey, messageIds, update) =>
      updateMessages(
        messageIds.map((messageId) => ({
          session_key: sessionKey,
          message_id: messageId,
          status: update.status,
          run_id: update.runId ?? null,
          summary: update.summary ?? null,
        })),
      ),
    listMessages: (sessionKey, statuses) =>
      read(() => {
        const records = (listMessages.all(sessionKey) as InboxRow[]).map(toInboxRecord);
        return statuses === undefined
          ? records
          : records.filter((record) => statuses.includes(record.status));
      }),
  };
}
