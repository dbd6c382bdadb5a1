import { deliveryStatuses, type DeliveryRecord } from '../contract/delivery-store.js';
import { corrupt } from './rows.js';

/** A delivery as both SQL ledgers store it. */
export interface DeliveryRow {
  readonly consumer: string;
  readonly run_id: string;
  readonly block_index: number;
  readonly session_key: string;
  readonly status: string;
  readonly platform_message_id: string | null;
  readonly updated_at: number;
}

const statuses: ReadonlySet<string> = new Set(deliveryStatuses);

/** A record from its row; `ledger_corrupt` for a status no version wrote. */
export function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  if (!statuses.has(row.status)) {
    throw corrupt(
      'deliveries',
      `${row.consumer}/${row.run_id}/${row.block_index}`,
      `unknown status "${row.status}"`,
      row.session_key,
    );
  }
  return {
    consumer: row.consumer,
    runId: row.run_id,
    blockIndex: row.block_index,
    sessionKey: row.session_key,
    status: row.status as DeliveryRecord['status'],
    ...(row.platform_message_id === null ? {} : { platformMessageId: row.platform_message_id }),
    updatedAt: row.updated_at,
  };
}
