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
}
