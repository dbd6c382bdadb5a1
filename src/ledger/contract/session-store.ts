/** A session's durable state: settings override, actor snapshot, fence epoch and last event seq. */
export interface SessionRecord {
  readonly sessionKey: string;
  readonly override: Readonly<Record<string, unknown>>;
  readonly snapshot: unknown;
  readonly epoch: number;
  readonly lastSeq: number;
  readonly updatedAt: number;
  /** The session's own tool-policy layer (opaque JSON here; the runtime validates it). */
  readonly toolPolicy?: unknown;
}

/** Where sessions' records are kept: one per key, replaced whole. */
export interface SessionStore {
  /** The session's record; undefined when it was never put. */
  getSession(sessionKey: string): Promise<SessionRecord | undefined>;
  /** Store a session's record, replacing the one stored under its key. */
  putSession(record: SessionRecord): Promise<void>;
  /** Every session's record (a corrupt one is skipped and reported where the ledger can hold one). */
  listSessions(): Promise<SessionRecord[]>;
  /**
   * A page of session keys in key order, after `after` (exclusive), at most `limit` of them, with when each record
   * was last put: what a listing needs, without reading the snapshots.
   */
  listSessionKeys(page: SessionKeyPage): Promise<SessionKeyEntry[]>;
}

/** Which page of session keys to list. */
export interface SessionKeyPage {
  readonly after?: string | undefined;
  readonly limit: number;
}

/** A session's key and when its record was last put. */
export interface SessionKeyEntry {
  readonly sessionKey: string;
  readonly updatedAt: number;
}
