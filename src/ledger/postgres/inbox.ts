import type { InboxStore } from '../contract/inbox-store.js';
import type { PostgresAccess } from './access.js';
import { insertSql, refuseDuplicate, valuesOf } from './rows.js';
import { inboxRow } from '../sql/params.js';
import { toInboxRecord, type InboxRow } from '../sql/rows.js';

const columns = [
  'session_key',
  'ord',
  'message_id',
  'text',
  'mode',
  'status',
  'accepted_at',
  'sender_id',
  'sender_name',
  'sender_role',
  'channel',
  'thread',
  'run_id',
  'summary',
  'parts',
] as const;

// The newest record of each id: a platform id accepted again after the dedupe window is a second record.
const updateSql = `UPDATE inbox SET status = $3, run_id = coalesce($4, inbox.run_id), summary = coalesce($5, inbox.summary)
  FROM (SELECT message_id, max(ord) AS ord FROM inbox WHERE session_key = $1 AND message_id = ANY($2::text[])
        GROUP BY message_id) AS newest
  WHERE inbox.session_key = $1 AND inbox.ord = newest.ord`;

/** Create the inbox store on the Postgres ledger. */
export function createPostgresInbox({ write, read }: PostgresAccess): InboxStore {
  return {
    appendMessage: (record) =>
      write(async (query) => {
        await refuseDuplicate(
          `inbox order ${record.order} of "${record.sessionKey}"`,
          query(insertSql('inbox', columns), valuesOf(inboxRow(record), columns)),
        );
      }),
    updateMessages: (sessionKey, messageIds, update) =>
      write(async (query) => {
        if (messageIds.length === 0) return;
        await query(updateSql, [
          sessionKey,
          [...messageIds],
          update.status,
          update.runId ?? null,
          update.summary ?? null,
        ]);
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
