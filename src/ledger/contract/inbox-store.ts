import type { StoredPart } from '../../core/index.js';
import type { InboxStatus } from '../../core/index.js';
import type { QueueMode } from '../../core/index.js';

export { inboxStatuses, type InboxStatus } from '../../core/index.js';

/**
 * One accepted inbound message. `order` is its arrival rank within the session and the record's key: a platform
 * id accepted again after the dedupe window is a second record, and updates by id go to the newest one.
 */
export interface InboxRecord {
  readonly sessionKey: string;
  readonly messageId: string;
  readonly order: number;
  readonly text: string;
  /** The queue mode it was admitted with (the `queue` alias already normalised to `followup`). */
  readonly mode: QueueMode;
  readonly status: InboxStatus;
  readonly acceptedAt: number;
  readonly senderId?: string;
  /** The sender's display name, when the message named one. */
  readonly senderName?: string;
  /** The sender's role (authority), when the message had one: a run of it after a restart keeps that authority. */
  readonly senderRole?: string;
  readonly channel?: string;
  readonly thread?: string;
  readonly runId?: string;
  /** The one-line summary kept when the cap dropped it with `drop: 'summarize'`. */
  readonly summary?: string;
  /** Its content parts: text, and references to attachments stored in the workspace (never their bytes). */
  readonly parts?: readonly StoredPart[];
}

/** A change of status for some of a session's messages. */
export interface InboxUpdate {
  readonly status: InboxStatus;
  readonly runId?: string;
  readonly summary?: string;
}

/** Where accepted inbound messages are kept, per session, in arrival order. */
export interface InboxStore {
  /** Record an accepted message; a second record with the same `order` in a session is refused. */
  appendMessage(record: InboxRecord): Promise<void>;
  /** Change the newest record of each id (ids not in the inbox are ignored). */
  updateMessages(sessionKey: string, messageIds: readonly string[], update: InboxUpdate): Promise<void>;
  /** A session's messages in arrival order, optionally only those with one of `statuses`. */
  listMessages(sessionKey: string, statuses?: readonly InboxStatus[]): Promise<InboxRecord[]>;
}
