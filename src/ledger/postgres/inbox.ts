import type { InboxStore } from '../contract/inbox-store.js';
import type { PostgresAccess } from './access.js';
import { RuntimeError } from '../../core/index.js';
import { gatherRows, type RowStatement } from './queue.js';
import { valuesOf } from './rows.js';
import { inboxColumns, inboxRow } from '../sql/params.js';
import { toInboxRecord, type InboxRow } from '../sql/rows.js';

/** Inbox rows, gathered from every append of a transaction into one statement (see `gatherRows`). */
const insertInboxSql: RowStatement = {
  sql: `INSERT INTO inbox (${inboxColumns.join(', ')}) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[],
    $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
    $13::text[], $14::text[], $15::text[])`,
  table: 'inbox',
  keyed: true,
  // A duplicate order is its append's mistake; written job by job (after a failed batch), the rows are one append's.
  refuse: (error, rows) =>
    (error as { code?: unknown }).code === '23505'
      ? new RuntimeError(
          'invalid_input',
          `inbox order ${rows[1]?.map(String).join(', ')} of "${String(rows[0]?.[0])}" is already recorded`,
          { cause: error },
        )
      : error,
};

// The newest record of each id: a platform id accepted again after the dedupe window is a second record. Gathered
// per message id, from every update of a transaction (a second update of one id goes in a statement of its own).
const updateInboxSql: RowStatement = {
  sql: `UPDATE inbox SET status = u.status, run_id = coalesce(u.run_id, inbox.run_id),
      summary = coalesce(u.summary, inbox.summary)
    FROM (SELECT u.*, (SELECT max(i.ord) FROM inbox i WHERE i.session_key = u.session_key
            AND i.message_id = u.message_id) AS ord
          FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
            AS u(session_key, message_id, status, run_id, summary)) AS u
    WHERE inbox.session_key = u.session_key AND inbox.ord = u.ord`,
  table: 'inbox',
  keyed: true,
};

/** A key of an inbox message id, for `gatherRows`. */
const messageKey = (sessionKey: string, messageId: string): string => JSON.stringify([sessionKey, messageId]);

/** Create the inbox store on the Postgres ledger. */
export function createPostgresInbox({ write, read }: PostgresAccess): InboxStore {
  return {
    appendMessage: (record) =>
      write(async (query) => {
        const row = valuesOf(inboxRow(record), inboxColumns);
        await gatherRows(
          query,
          insertInboxSql,
          row.map((value) => [value]),
          [messageKey(record.sessionKey, record.messageId)],
        );
      }),
    updateMessages: (sessionKey, messageIds, update) =>
      write(async (query) => {
        if (messageIds.length === 0) return;
        const ids = [...new Set(messageIds)];
        const each = <T>(value: T): T[] => ids.map(() => value);
        await gatherRows(
          query,
          updateInboxSql,
          [
            each(sessionKey),
            ids,
            each(update.status),
            each(update.runId ?? null),
            each(update.summary ?? null),
          ],
          ids.map((id) => messageKey(sessionKey, id)),
        );
      }),
    listMessages: (sessionKey, statuses) =>
      read(async (query) => {
        const { rows } = await query<InboxRow>('SELECT * FROM inbox WHERE session_key = $1 ORDER BY ord', [
          sessionKey,
        ]);
        const records = rows.map(toInboxRecord);
        return statuses === undefined
          ? records
          : records.filter((record) => statuses.includes(record.status));
      }),
  };
}
