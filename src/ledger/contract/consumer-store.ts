/**
 * Where a durable event consumer stands: the cursor of the last event it processed. `sessionKey` is set for a
 * consumer of one session's events (`session.events({ consumer })`), absent for one of every session's.
 */
export interface ConsumerPosition {
  readonly consumer: string;
  readonly sessionKey?: string;
  readonly cursor: number;
  readonly updatedAt: number;
}

/** Where durable event consumers' positions are kept. */
export interface ConsumerStore {
  /** Where consumer `consumer` (of `sessionKey`'s events, or of every session's) stands; undefined if it never did. */
  getConsumer(consumer: string, sessionKey?: string): Promise<ConsumerPosition | undefined>;
  /** Store a consumer's position (replacing the one stored for the same consumer and session). */
  putConsumer(position: ConsumerPosition): Promise<void>;
  /**
   * Delete the positions of consumers whose name starts with `prefix`, stored before `before` (ms), of every
   * session; resolves how many went. Records kept under consumer names, such as an adapter's handled platform
   * messages, do not pile up for good.
   */
  forgetConsumers(prefix: string, before: number): Promise<number>;
}
