import type { DeliveryStore } from '../contract/delivery-store.js';
import { toDeliveryRecord, type DeliveryRow } from '../sql/delivery-rows.js';
import type { PostgresAccess } from './access.js';

/** An upsert to `status`, applied only over a record in one of `onlyFrom` (the transitions the store allows). */
const upsertSql = (status: string, onlyFrom: string): string =>
  `INSERT INTO deliveries (consumer, run_id, block_index, session_key, status, platform_message_id, updated_at)
   VALUES ($1, $2, $3, $4, '${status}', $5, $6)
   ON CONFLICT (consumer, run_id, block_index) DO UPDATE SET status = excluded.status,
     platform_message_id = excluded.platform_message_id, updated_at = excluded.updated_at
   WHERE deliveries.status IN (${onlyFrom})`;
const sendingSql = upsertSql('sending', `'sending'`);
const deliveredSql = upsertSql('delivered', `'sending', 'in_doubt', 'delivered'`);
const inDoubtSql = upsertSql('in_doubt', `'sending', 'in_doubt'`);
const putConsumerSql = `INSERT INTO consumers (consumer, session_key, cursor, updated_at) VALUES ($1, '', $2, $3)
  ON CONFLICT (consumer, session_key) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`;

/** Create the delivery methods on the Postgres ledger: a delivery and its consumer's cursor in one transaction. */
export function createPostgresDeliveries({ write, read }: PostgresAccess): DeliveryStore {
  return {
    getDelivery: (key) =>
      read(async (query) => {
        const { rows } = await query<DeliveryRow>(
          'SELECT * FROM deliveries WHERE consumer = $1 AND run_id = $2 AND block_index = $3',
          [key.consumer, key.runId, key.blockIndex],
        );
        return rows[0] && toDeliveryRecord(rows[0]);
      }),
    listDeliveries: (consumer, runId) =>
      read(async (query) => {
        const { rows } = await query<DeliveryRow>(
          'SELECT * FROM deliveries WHERE consumer = $1 AND run_id = $2 ORDER BY block_index',
          [consumer, runId],
        );
        return rows.map(toDeliveryRecord);
      }),
    markSending: (intent) =>
      write(async (query) => {
        const values = [intent.consumer, intent.runId, intent.blockIndex, intent.sessionKey, null, intent.at];
        return (await query(sendingSql, values)).rowCount > 0;
      }),
    recordDelivery: (block) =>
      write(async (query) => {
        const key = [block.consumer, block.runId, block.blockIndex, block.sessionKey];
        await query(deliveredSql, [...key, block.platformMessageId, block.at]);
        await query(putConsumerSql, [block.consumer, block.cursor, block.at]);
      }),
    markInDoubt: (intent) =>
      write(async (query) => {
        const values = [intent.consumer, intent.runId, intent.blockIndex, intent.sessionKey, null, intent.at];
        await query(inDoubtSql, values);
      }),
  };
}
