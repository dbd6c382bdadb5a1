import type { RuntimeError } from '../../core/index.js';
import type { InboxRecord } from './inbox-store.js';
import type { RunRecord } from './run-store.js';
import type { SessionRecord } from './session-store.js';
import type { ToolCallRecord } from './tool-call-store.js';

/**
 * What hydrating a session needs, in one call: its record, where its numbering stands (the record can lag
 * behind after a crash) and its inbox messages still to run (the `stillToRun` policy: `pending`, and `steered`
 * ones no turn admitted).
 */
export interface SessionState {
  readonly record: SessionRecord | undefined;
  /** The highest event seq recorded for the session (0 when none). */
  readonly lastSeq: number;
  /** The highest inbox order recorded for the session (0 when none). */
  readonly lastOrder: number;
  /** Messages still to run, in arrival order. */
  readonly pending: readonly InboxRecord[];
  /**
   * `[messageId, acceptedAt]` of the latest accepted messages (at most `recentLimit`, oldest first), so the dedupe
   * window survives a crash that happened before the session's snapshot was written.
   */
  readonly recent: readonly (readonly [string, number])[];
  /** The session's paused run, if any, with the calls of the batch that paused it (position order). */
  readonly paused?: { readonly run: RunRecord; readonly calls: readonly ToolCallRecord[] };
}

/** What `loadSessions` found for one key: its state, or why that session alone cannot be loaded. */
export type SessionLoad =
  | { readonly sessionKey: string; readonly state: SessionState }
  | { readonly sessionKey: string; readonly error: RuntimeError };

/** How many recent message ids `loadSession` returns. */
export const recentLimit = 1000;

/**
 * What a restart reads across the other stores: one session's state, the sessions with messages still to run, a
 * crashed run's partial text, and the rows that could not be read.
 */
export interface RecoveryStore {
  /** Everything hydration needs about one session (see SessionState). */
  loadSession(sessionKey: string): Promise<SessionState>;
  /**
   * What `loadSession` gives for each key, read for all of them at once (one read per table, not one per table and
   * session: what hydrating many sessions together costs), in the order of `sessionKeys`. A session that cannot be
   * loaded because a row of it is corrupt gets its `ledger_corrupt` in its own entry and the others load; any other
   * failure (a closed ledger, the file) rejects the whole call. Optional: a ledger without it is read with
   * `loadSession` per key.
   */
  loadSessions?(sessionKeys: readonly string[]): Promise<SessionLoad[]>;
  /** Keys of the sessions that have messages still to run (what a restart must resume). */
  listSessionsWithPending(): Promise<string[]>;
  /** The assistant text a run streamed so far, from its recorded deltas (the partial output of a crash). */
  runText(runId: string): Promise<string>;
  /**
   * The seq of the session's last recorded event (0 when none), even when the session cannot be loaded (a corrupt
   * row): a report about it still gets the next seq. Optional: ledgers that cannot hold corrupt rows omit it.
   */
  lastSeq?(sessionKey: string): Promise<number>;
  /**
   * Listen for the rows that failed validation (`ledger_corrupt`, `details` naming table, row and session) and
   * were skipped so that other sessions' reads go on: a replayed event, an open run, a profile's state. Each row is
   * reported once. Returns the function that stops listening. Optional, as `lastSeq`.
   */
  onCorruptRow?(listener: (error: RuntimeError) => void): () => void;
}
