import type { ErrorInfo, RuntimeError } from '../core/errors.js';
import type { RunStatus, RuntimeEvent } from '../core/events.js';
import type { ToolCall, Usage } from '../core/model-types.js';
import type { PlanRecord, StepResultRecord } from './plan-records.js';
import type {
  CompensationRecord,
  CompensationUpdate,
  RememberedTools,
  ToolCallKey,
  ToolCallRecord,
  ToolCallUpdate,
} from './tool-call-records.js';

/** The life of an accepted inbound message, as the inbox records it. */
export const inboxStatuses = ['pending', 'steered', 'collected', 'consumed', 'dropped', 'cancelled'] as const;
/** Where an accepted message stands. */
export type InboxStatus = (typeof inboxStatuses)[number];

/**
 * One accepted inbound message. `order` is its arrival rank within the session and the record's key: a platform
 * id accepted again after the dedupe window is a second record, and updates by id go to the newest one.
 */
export interface InboxRecord {
  readonly sessionKey: string;
  readonly messageId: string;
  readonly order: number;
  readonly text: string;
  readonly mode: string;
  readonly status: InboxStatus;
  readonly acceptedAt: number;
  readonly senderId?: string;
  readonly channel?: string;
  readonly thread?: string;
  readonly runId?: string;
  /** The one-line summary kept when the cap dropped it with `drop: 'summarize'`. */
  readonly summary?: string;
}

/** A change of status for some of a session's messages. */
export interface InboxUpdate {
  readonly status: InboxStatus;
  readonly runId?: string;
  readonly summary?: string;
}

/** A run that paused for an operator's decision or for tool results from outside; it survives a restart. */
export const pausedRunStatuses = ['awaiting_approval', 'awaiting_tool_results'] as const;
/** Why a run is paused. */
export type PausedRunStatus = (typeof pausedRunStatuses)[number];

/** The statuses of a run that has not ended. */
export type OpenRunStatus = 'running' | PausedRunStatus;

/**
 * A run, open (`running` or paused) or ended. `text` is the assistant text so far (the partial output of a
 * crash).
 */
export interface RunRecord {
  readonly runId: string;
  readonly sessionKey: string;
  readonly status: RunStatus | OpenRunStatus;
  readonly messageIds: readonly string[];
  readonly provider: string;
  readonly model: string;
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly error?: ErrorInfo;
  readonly usage: Usage;
  readonly text: string;
  /** What the run's model calls cost, from the price table (unknown prices count 0). */
  readonly cost?: number;
}

/** Where an open run stands: its assistant text, usage and cost so far. */
export interface RunProgress {
  readonly text: string;
  readonly usage: Usage;
  readonly cost?: number;
}

/** How a run ended. */
export interface RunClose {
  readonly status: RunStatus;
  readonly endedAt: number;
  readonly text: string;
  readonly usage: Usage;
  readonly cost?: number;
  readonly error?: ErrorInfo;
}

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

/**
 * What hydrating a session needs, in one call: its record, where its numbering stands (the record can lag
 * behind after a crash) and its inbox messages still to run (`pending`, and `steered` ones no turn admitted).
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

/** How many recent message ids `loadSession` returns. */
export const recentLimit = 1000;

/** Which events to read: after a global cursor, optionally for one session, at most `limit`. */
export interface EventQuery {
  readonly after?: number;
  readonly sessionKey?: string;
  readonly limit?: number;
}

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

/**
 * Where the runtime records everything. Async so that SQLite (group commit) and Postgres can implement it.
 * A write resolves once it is durable; a read reflects every write that was called before it.
 * Implementations store copies: a record passed in may not be changed by the caller afterwards, and
 * records handed out are the ledger's to keep (callers must not mutate them).
 */
export interface Ledger {
  /**
   * True when a write is complete once its method returns (nothing is committed later, as in the memory ledger):
   * the event bus then delivers an event in the stretch that emitted it. @default false
   */
  readonly writesAreImmediate?: boolean;
  getSession(sessionKey: string): Promise<SessionRecord | undefined>;
  /** Everything hydration needs about one session (see SessionState). */
  loadSession(sessionKey: string): Promise<SessionState>;
  /** Keys of the sessions that have messages still to run (what a restart must resume). */
  listSessionsWithPending(): Promise<string[]>;
  putSession(record: SessionRecord): Promise<void>;
  listSessions(): Promise<SessionRecord[]>;

  /** Record an accepted message; a second record with the same `order` in a session is refused. */
  appendMessage(record: InboxRecord): Promise<void>;
  /** Change the newest record of each id (ids not in the inbox are ignored). */
  updateMessages(sessionKey: string, messageIds: readonly string[], update: InboxUpdate): Promise<void>;
  /** A session's messages in arrival order, optionally only those with one of `statuses`. */
  listMessages(sessionKey: string, statuses?: readonly InboxStatus[]): Promise<InboxRecord[]>;

  openRun(record: RunRecord): Promise<void>;
  closeRun(runId: string, close: RunClose): Promise<void>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** A session's runs in start order. */
  listRuns(sessionKey: string): Promise<RunRecord[]>;
  /** Every run still `running`, across sessions (what a crash left open). Paused runs are not listed. */
  listOpenRuns(): Promise<RunRecord[]>;
  /** Every paused run, across sessions, in start order (what a restart must bring back as paused). */
  listPausedRuns(): Promise<RunRecord[]>;
  /**
   * Pause an open run or resume a paused one (`running`); refused (`not_found`) for a run that is not open. With
   * `progress`, the run's text, usage and cost so far are stored too (what a pause must keep for the resume).
   */
  setRunStatus(runId: string, status: OpenRunStatus, progress?: RunProgress): Promise<void>;
  /** The assistant text a run streamed so far, from its recorded deltas (the partial output of a crash). */
  runText(runId: string): Promise<string>;

  appendTurns(records: readonly TurnRecord[]): Promise<void>;
  /** A session's transcript in recorded order; with `last`, only its latest `last` turns. */
  listTurns(sessionKey: string, options?: { readonly last?: number }): Promise<TurnRecord[]>;
  /** One run's turns in recorded order. */
  listRunTurns(runId: string): Promise<TurnRecord[]>;

  /** Record the calls of a batch that paused; a key already recorded is refused (`invalid_input`). */
  putToolCalls(records: readonly ToolCallRecord[]): Promise<void>;
  /** Change a recorded call; `not_found` when there is none with that key. */
  updateToolCall(key: ToolCallKey, update: ToolCallUpdate): Promise<void>;
  /** A run's recorded calls, by turn then position. */
  listToolCalls(runId: string): Promise<ToolCallRecord[]>;
  /** Tools approved with `remember`: `run` ones of this run, `session` ones of any run of the session. */
  rememberedTools(sessionKey: string, runId: string): Promise<RememberedTools>;

  /** Record the compensation of a call that succeeded; a `(runId, seq)` already recorded is refused. */
  appendCompensation(record: CompensationRecord): Promise<void>;
  /** Change a compensation after an undo attempt; `not_found` when there is none. */
  updateCompensation(runId: string, seq: number, update: CompensationUpdate): Promise<void>;
  /** A run's compensations by `seq`. */
  listCompensations(runId: string): Promise<CompensationRecord[]>;

  /** Record a plan run's definition; a run that already has one is refused (`invalid_input`). */
  putPlan(record: PlanRecord): Promise<void>;
  getPlan(runId: string): Promise<PlanRecord | undefined>;
  /** Add step ids to a plan's approved list (ids already there keep their place); `not_found` without a plan. */
  approvePlanSteps(runId: string, stepIds: readonly string[]): Promise<void>;
  /** Record a finished step; a `(runId, stepId)` or `(runId, seq)` already recorded is refused (`invalid_input`). */
  putStepResult(record: StepResultRecord): Promise<void>;
  /** A plan run's step results by `seq`. */
  listStepResults(runId: string): Promise<StepResultRecord[]>;

  /** Append events whose `cursor` and `seq` the runtime already stamped (cursors strictly increasing). */
  appendEvents(events: readonly RuntimeEvent[]): Promise<void>;
  /** Events with `cursor > after`, in cursor order. */
  readEvents(query: EventQuery): Promise<RuntimeEvent[]>;
  /** The highest cursor recorded, 0 when none. */
  lastCursor(): Promise<number>;
  /** Delete events recorded before `before` (ms); turns, runs and the inbox are kept. Resolves how many went. */
  pruneEvents(before: number): Promise<number>;
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

  /** Where consumer `consumer` (of `sessionKey`'s events, or of every session's) stands; undefined if it never did. */
  getConsumer(consumer: string, sessionKey?: string): Promise<ConsumerPosition | undefined>;
  /** Store a consumer's position (replacing the one stored for the same consumer and session). */
  putConsumer(position: ConsumerPosition): Promise<void>;

  /** Every auth profile's usage state (cooldowns, counters), as the runtime last saved it; opaque JSON here. */
  loadProfileStates(): Promise<Map<string, unknown>>;
  saveProfileState(profileId: string, state: unknown, at: number): Promise<void>;

  close(): Promise<void>;
}
