import type { ToolCall } from '../core/model-types.js';

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
}

/** Where sessions' transcripts are kept: turns appended in order, read per session or per run. */
export interface TranscriptStore {
  /** Append turns, in the order given. */
  appendTurns(records: readonly TurnRecord[]): Promise<void>;
  /** A session's transcript in recorded order; with `last`, only its latest `last` turns. */
  listTurns(sessionKey: string, options?: { readonly last?: number }): Promise<TurnRecord[]>;
  /** One run's turns in recorded order. */
  listRunTurns(runId: string): Promise<TurnRecord[]>;
}
