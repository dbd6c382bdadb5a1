import type { ConsumerStore } from '../contract/consumer-store.js';
import type { PostgresAccess } from './access.js';
import { corrupt } from '../sql/rows.js';

/** A consumer position as stored: `session_key` is '' for a consumer of every session (keys are never empty). */
interface ConsumerRow {
  readonly cursor: unknown;
  readonly updated_at: unknown;
}

const putSql = `INSERT INTO consumers (consumer, session_key, cursor, updated_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (consumer, session_key) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`;

/** Create the consumer-position methods on the Postgres ledger. */
export function createPostgresConsumers({ write, read }: PostgresAccess): ConsumerStore {
  return {
    getConsumer: (consumer, sessionKey) =>
      read(async (query) => {
        const { rows } = await query<ConsumerRow>(
          'SELECT cursor, updated_at FROM consumers WHERE consumer = $1 AND session_key = $2',
          [consumer, sessionKey ?? ''],
        );
        const row = rows[0];
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
      write(async (query) => {
        await query(putSql, [
          position.consumer,
          position.sessionKey ?? '',
          position.cursor,
          position.updatedAt,
        ]);
      }),
    forgetConsumers: (prefix, before) =>
      write(async (query) => {
        const { rowCount } = await query(
          'DELETE FROM consumers WHERE starts_with(consumer, $1) AND updated_at < $2',
          [prefix, before],
        );
        return rowCount ?? 0;
      }),
  };
}
