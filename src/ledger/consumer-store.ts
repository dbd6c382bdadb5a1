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
}
