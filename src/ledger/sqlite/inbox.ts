import type { InboxStore } from '../contract/inbox-store.js';
import type { SqliteAccess } from './access.js';
import { inboxRow } from '../sql/params.js';
import { constraint, toInboxRecord, type InboxRow } from '../sql/rows.js';

/** Create the inbox store on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteInbox({ db, write, read }: SqliteAccess): InboxStore {
  const appendMessage = db.prepare(
    `INSERT INTO inbox (session_key, ord, message_id, text, mode, status, accepted_at, sender_id, sender_name,
       sender_role, channel, thread, run_id, summary, parts)
     VALUES (@session_key, @ord, @message_id, @text, @mode, @status, @accepted_at, @sender_id, @sender_name,
       @sender_role, @channel, @thread, @run_id, @summary, @parts)`,
  );
  // The newest record of the id: a platform id accepted again after the dedupe window is a second record.
  const updateMessage = db.prepare(
    `UPDATE inbox SET status = @status, run_id = coalesce(@run_id, run_id), summary = coalesce(@summary, summary)
     WHERE session_key = @session_key
       AND ord = (SELECT ord FROM inbox WHERE session_key = @session_key AND message_id = @message_id
         ORDER BY ord DESC LIMIT 1)`,
  );
  const listMessages = db.prepare('SELECT * FROM inbox WHERE session_key = ? ORDER BY ord');
  return {
    appendMessage: (record) =>
      write(
        constraint(`inbox order ${record.order} of "${record.sessionKey}"`, () =>
          appendMessage.run(inboxRow(record)),
        ),
        'one',
      ),
    updateMessages: (sessionKey, messageIds, update) =>
      write(
        () => {
          for (const messageId of messageIds) {
            updateMessage.run({
              session_key: sessionKey,
              message_id: messageId,
              status: update.status,
              run_id: update.runId ?? null,
              summary: update.summary ?? null,
            });
          }
        },
        messageIds.length === 1 ? 'one' : 'many',
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
