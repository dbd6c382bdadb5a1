import { corrupt } from '../sql/rows.js';
import type { ConsumerStore } from '../contract/consumer-store.js';
import type { SqliteAccess } from './access.js';

/** A consumer position as stored: `session_key` is '' for a consumer of every session (keys are never empty). */
interface ConsumerRow {
  readonly consumer: string;
  readonly session_key: string;
  readonly cursor: unknown;
  readonly updated_at: unknown;
}

/** Create the consumer-position methods on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteConsumers({ db, write, read }: SqliteAccess): ConsumerStore {
  const getConsumer = db.prepare('SELECT * FROM consumers WHERE consumer = ? AND session_key = ?');
  const putConsumer = db.prepare(
    `INSERT INTO consumers (consumer, session_key, cursor, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (consumer, session_key) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
  );
  // substr and length count characters, as a JavaScript prefix's code points do for the names used here.
  const forget = db.prepare(
    'DELETE FROM consumers WHERE substr(consumer, 1, length(@prefix)) = @prefix AND updated_at < @before',
  );
  return {
    getConsumer: (consumer, sessionKey) =>
      read(() => {
        const row = getConsumer.get(consumer, sessionKey ?? '') as ConsumerRow | undefined;
        if (row === undefined) return undefined;
        if (!Number.isSafeInteger(row.cursor) || typeof row.updated_at !== 'number') {
          throw corrupt('consumers', `"${consumer}"`, 'cursor or updated_at is not a number');
        }
        return {
          consumer,
          ...(sessionKey === undefined ? {} : { sessionKey }),
          cursor: row.cursor as number,
          updatedAt: row.updated_at,
        };
      }),
    putConsumer: (position) =>
      write(
        () =>
          putConsumer.run(position.consumer, position.sessionKey ?? '', position.cursor, position.updatedAt),
        'one',
      ),
    forgetConsumers: (prefix, before) => {
      let forgotten = 0;
      return write(() => {
        forgotten = forget.run({ prefix, before }).changes;
      }, 'one').then(() => forgotten);
    },
  };
}
