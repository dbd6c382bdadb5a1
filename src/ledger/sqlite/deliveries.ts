import type { DeliveryStore } from '../contract/delivery-store.js';
import { toDeliveryRecord, type DeliveryRow } from '../sql/delivery-rows.js';
import type { SqliteAccess } from './access.js';

/** Create the delivery methods on the SQLite ledger's connection (its schema is already migrated). */
export function createSqliteDeliveries({ db, write, read }: SqliteAccess): DeliveryStore {
  const get = db.prepare('SELECT * FROM deliveries WHERE consumer = ? AND run_id = ? AND block_index = ?');
  const list = db.prepare('SELECT * FROM deliveries WHERE consumer = ? AND run_id = ? ORDER BY block_index');
  const upsert = (status: string, onlyFrom: string) =>
    db.prepare(
      `INSERT INTO deliveries (consumer, run_id, block_index, session_key, status, platform_message_id, updated_at)
       VALUES (?, ?, ?, ?, '${status}', ?, ?)
       ON CONFLICT (consumer, run_id, block_index) DO UPDATE SET status = excluded.status,
         platform_message_id = excluded.platform_message_id, updated_at = excluded.updated_at
       WHERE deliveries.status IN (${onlyFrom})`,
    );
  const sending = upsert('sending', `'sending'`);
  const delivered = upsert('delivered', `'sending', 'in_doubt', 'delivered'`);
  const inDoubt = upsert('in_doubt', `'sending', 'in_doubt'`);
  const putConsumer = db.prepare(
    `INSERT INTO consumers (consumer, session_key, cursor, updated_at) VALUES (?, '', ?, ?)
     ON CONFLICT (consumer, session_key) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
  );
  return {
    getDelivery: (key) =>
      read(() => {
        const row = get.get(key.consumer, key.runId, key.blockIndex) as DeliveryRow | undefined;
        return row && toDeliveryRecord(row);
      }),
    listDeliveries: (consumer, runId) =>
      read(() => (list.all(consumer, runId) as DeliveryRow[]).map(toDeliveryRecord)),
    markSending: async (intent) => {
      let changes = 0;
      await write(() => {
        const args = [intent.consumer, intent.runId, intent.blockIndex, intent.sessionKey, null, intent.at];
        changes = sending.run(...args).changes;
      }, 'one');
      return changes > 0;
    },
    recordDelivery: (block) =>
      write(() => {
        delivered.run(
          ...[block.consumer, block.runId, block.blockIndex, block.sessionKey],
          ...[block.platformMessageId, block.at],
        );
        putConsumer.run(block.consumer, block.cursor, block.at);
      }, 'many'),
    markInDoubt: (intent) =>
      write(() => {
        inDoubt.run(intent.consumer, intent.runId, intent.blockIndex, intent.sessionKey, null, intent.at);
      }, 'one'),
  };
}
