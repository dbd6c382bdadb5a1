import type { InlineAttachment } from '../../core/index.js';
import type { ToolCall } from '../../core/index.js';

/** One entry of a session's transcript. `index` orders the turns of a run. */
export interface TurnRecord {
  readonly sessionKey: string;
  readonly runId: string;
  readonly index: number;
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string;
  readonly at: number;
  readonly toolCalls?: readonly ToolCall[];
  readonly toolCallId?: string;
  readonly tool?: string;
  readonly isError?: boolean;
  /** The inbound messages a user turn was made of. */
  readonly messageIds?: readonly string[];
  /** A user turn's inline attachments (references: the bytes stay in the workspace). */
  readonly attachments?: readonly InlineAttachment[];
}

/**
 * A session whose transcript starts as another's, stored by reference: its transcript is the first `turns` turns of
 * the parent's (as the parent lists them, itself perhaps a fork), then its own.
 */
export interface TranscriptFork {
  readonly sessionKey: string;
  readonly parentKey: string;
  /** How many of the parent's turns the fork inherits. */
  readonly turns: number;
  /** The parent's run the fork was taken after (undefined: none of the parent's own runs had ended). */
  readonly upToRunId?: string;
  readonly at: number;
}

/**
 * Where sessions' transcripts are kept: turns appended in order, read per session or per run. A forked session's
 * list starts with the turns it inherits (they keep their own session key and run id).
 */
export interface TranscriptStore {
  /** Append turns, in the order given. */
  appendTurns(records: readonly TurnRecord[]): Promise<void>;
  /** A session's transcript in recorded order; with `last`, only its latest `last` turns. */
  listTurns(sessionKey: string, options?: { readonly last?: number }): Promise<TurnRecord[]>;
  /** One run's turns in recorded order. */
  listRunTurns(runId: string): Promise<TurnRecord[]>;
  /**
   * Record a fork (one row, whatever the parent's length). Rejects with `invalid_input`, writing nothing, when the
   * session already has a fork or turns of its own.
   */
  forkTranscript(fork: TranscriptFork): Promise<void>;
  /** The session's fork; undefined when it is not one. */
  getFork(sessionKey: string): Promise<TranscriptFork | undefined>;
}
