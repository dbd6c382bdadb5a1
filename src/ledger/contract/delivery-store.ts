/** Where one reply block stands for one consumer: being sent, delivered, or lost track of (in doubt). */
export const deliveryStatuses = ['sending', 'delivered', 'in_doubt'] as const;
/** One of `deliveryStatuses`. */
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/** The block index a run's "interrupted" notice is recorded under (blocks count from 0). */
export const interruptedNoticeIndex = -1;

/** Which delivery: a consumer (the adapter's durable event consumer), a run and one of its blocks. */
export interface DeliveryKey {
  readonly consumer: string;
  readonly runId: string;
  /** The block's index in the run (`assistant.block` index), or `interruptedNoticeIndex`. */
  readonly blockIndex: number;
}

/** A reply block as recorded by a consumer that delivers it to a chat platform. */
export interface DeliveryRecord extends DeliveryKey {
  readonly sessionKey: string;
  readonly status: DeliveryStatus;
  /** The platform's id of the message that carries the block (once delivered). */
  readonly platformMessageId?: string;
  readonly updatedAt: number;
}

/** The intent to send a block, written before the send. */
export interface DeliveryIntent extends DeliveryKey {
  readonly sessionKey: string;
  readonly at: number;
}

/** A block the platform accepted, with the consumer's cursor: both are stored in one transaction. */
export interface DeliveredBlock extends DeliveryIntent {
  readonly platformMessageId: string;
  /** The consumer's new position (the cursor of the event that carried the block). */
  readonly cursor: number;
}

/**
 * Where chat adapters record what they delivered (run id + block index -> platform message id, per consumer), so
 * that a restart neither sends a block again nor drops one silently.
 */
export interface DeliveryStore {
  /** The record of one block for one consumer; undefined when it was never attempted. */
  getDelivery(key: DeliveryKey): Promise<DeliveryRecord | undefined>;
  /** Every record of a run for one consumer, by block index. */
  listDeliveries(consumer: string, runId: string): Promise<DeliveryRecord[]>;
  /**
   * Write the intent to send a block (status `sending`). A block already delivered or in doubt keeps its record:
   * the intent is refused silently (resolves false); true when the intent is stored.
   */
  markSending(intent: DeliveryIntent): Promise<boolean>;
  /** Record a block delivered AND move the consumer (of every session's events) to `cursor`, in one transaction. */
  recordDelivery(delivered: DeliveredBlock): Promise<void>;
  /** Record that a block's send was in flight at a crash and the platform cannot tell whether it arrived. */
  markInDoubt(intent: DeliveryIntent): Promise<void>;
}
