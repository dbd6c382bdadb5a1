import type { InlineAttachment, StoredPart } from '../core/index.js';
import type { AbortStatus } from '../runner/index.js';
import type { Disposition } from '../core/index.js';
import type { PauseState } from '../core/index.js';
import type { SteerMessage } from '../runner/index.js';
import type { QueueSettings, QueueSettingsInput } from '../policies/index.js';
import type { PausedCallInfo, RunPaused, RunResult, RunSummary } from '../runner/index.js';

/** A message waiting in a session's queue. Plain data: it lives in the persisted actor snapshot. */
export interface QueuedMessage {
  readonly messageId: string;
  readonly text: string;
  readonly mode: 'followup' | 'collect' | 'interrupt';
  readonly enqueuedAt: number;
  /** The drain timing this message asked for (the last enqueued message's values govern the drain). */
  readonly debounceMs: number;
  readonly maxWaitMs: number;
  readonly senderId?: string;
  /** The sender's name, kept for the line the model sees before the message (with `attribute`). */
  readonly senderName?: string;
  /** The sender's role; messages of different roles never share a run (none: the runtime's default role). */
  readonly role?: string;
  /** Whether the model sees the sender and role before the message's text. */
  readonly attribute?: boolean;
  readonly channel?: string;
  readonly thread?: string;
  /** Its content parts (references into the workspace, never bytes). */
  readonly parts?: readonly StoredPart[];
}

/** The messages one run is made of, and the prompt built from them. */
export interface RunBatch {
  readonly runId: string;
  readonly prompt: string;
  /** The inline attachments of its messages, in message order (absent when none). */
  readonly attachments?: readonly InlineAttachment[];
  readonly messageIds: readonly string[];
  /** `collected` when several collect-mode messages were merged into this run. */
  readonly consumedAs: 'consumed' | 'collected';
}

/** How a paused run continues: from which pause, and whether it only ends (aborted or interrupted meanwhile). */
export interface RunResumption {
  readonly from: PauseState;
  readonly abort?: { readonly status: AbortStatus; readonly reason: string };
}

/** The run a session is executing. */
export interface ActiveRun extends RunBatch {
  readonly startedAt: number;
  readonly items: readonly QueuedMessage[];
  /** The session's preferred auth profile when the run started. */
  readonly preferredProfile?: string;
  /** Set when the run continues after a pause. */
  readonly resume?: RunResumption;
}

/** A call a paused run waits for, and whether it has been settled (decided or supplied). */
export interface PausedCallState extends PausedCallInfo {
  readonly settled: boolean;
}

/** Why the session's run is paused, what it waits for, and when the pause expires (absolute time). */
export interface PauseContext {
  readonly state: PauseState;
  readonly calls: readonly PausedCallState[];
  readonly until: number;
}

/** A step a paused plan run waits for: approve or reject it with `approvePlan`. */
export interface PlanStepWait {
  readonly stepId: string;
  readonly tool: string;
}

/**
 * A plan run of the session, from `executePlan` (or `approvePlan`) until it ends: while one is held, no other run
 * starts (messages queue), so a plan is a run of the session like any other and a paused plan holds the session
 * like a paused run. `running` covers the wait for the session lane too.
 */
export interface PlanHold {
  readonly runId: string;
  readonly state: 'running' | 'awaiting_approval';
  /** With `awaiting_approval`: the steps it waits for. */
  readonly steps: readonly PlanStepWait[];
}

/** The session actor's context: serialisable, so a hibernated session is just this snapshot. */
export interface SessionContext {
  readonly sessionKey: string;
  readonly queue: readonly QueuedMessage[];
  /** One-line summaries of messages the cap dropped (the first `dropSummaryLimit`), prepended to the next prompt. */
  readonly dropped: readonly string[];
  /** How many dropped messages have no line in `dropped` (absent in snapshots from before it existed). */
  readonly droppedOmitted?: number;
  /** `[messageId, acceptedAt]` of recently accepted messages, for dedupe. */
  readonly seen: readonly (readonly [string, number])[];
  /** Arrival rank of the next accepted message. */
  readonly nextOrder: number;
  readonly lastEnqueuedAt: number | null;
  readonly runEndedAt: number | null;
  /** Absolute time the queue drains (debounce deadlines are data, re-armed on hydrate). */
  readonly drainAt: number | null;
  /** An interrupting message at the head of the queue runs as soon as the old run ends, until this time. */
  readonly interruptUntil: number | null;
  readonly run: ActiveRun | null;
  /** The auth profile this session's runs try first (docs/failover.md: the preferred profile first). */
  readonly preferredProfile: string | null;
  /** Set while the run is paused (awaiting approval or tool results). */
  readonly pause: PauseContext | null;
  /** The session's plan runs not ended yet, oldest first (absent in snapshots from before plans were held). */
  readonly plans?: readonly PlanHold[];
  /** What became of the last admitted message (absent until one was admitted). */
  readonly admitted?: Admitted;
  /** The session's queue-settings override (`configure`); the ledger row stores it (absent when none). */
  readonly override?: QueueSettingsInput;
  /** The session's own tool-policy layer, as stored (the runtime validates it); the ledger row stores it. */
  readonly toolPolicy?: unknown;
  /**
   * The last run that ended while nobody waited for it: the next `waitForEnd()` answers it instead of `idle`, so a
   * run that failed before its sender asked is never reported as nothing. Not persisted (the ledger has the run).
   */
  readonly unobservedEnd?: RunSummary | undefined;
}

/** What the session actor emits (`actor.on`): a run (or a plan run) of the session paused or ended. */
export interface RunSettled {
  readonly type: 'run.settled';
  readonly result: RunResult;
}

/** How an admitted message ended up, as the ADMIT that took it left the session (docs/semantics.md, "Queue modes"). */
export interface Admitted {
  readonly messageId: string;
  /** What the session machine decided: `start`, `steer`, `enqueue` or `interrupt` (a durable message is never refused). */
  readonly kind: 'start' | 'steer' | 'enqueue' | 'interrupt';
  /** What `send()` answers; a message the same step took into a run answers `started`. */
  readonly disposition: Exclude<Disposition, 'rejected' | 'duplicate'>;
  /** 1-based position in the queue, when the message waits there. */
  readonly position?: number;
  /** The run the message started, joined or was steered into. */
  readonly runId?: string;
  /** The oldest queued message the cap dropped for it, and its summary when the cap summarizes. */
  readonly dropped?: { readonly messageId: string; readonly summary: string | null };
}

/**
 * Events the session actor accepts. ADMIT brings a message whose inbox record is durable (`recorded` is the status
 * it was written with) and `remember`: whether it came with a platform id to keep for the dedupe window.
 */
export type SessionEvent =
  | {
      type: 'ADMIT';
      item: QueuedMessage;
      settings: QueueSettings;
      recorded: 'steered' | 'pending';
      at: number;
      remember: boolean;
      /** How long an interrupting message may wait for the interrupted run to end before it runs anyway. */
      waitMs: number;
    }
  | { type: 'ABORT'; status: AbortStatus; reason: string }
  | { type: 'CANCEL'; messageIds: readonly string[] }
  | { type: 'HYDRATED' }
  | { type: 'PREFER_PROFILE'; profileId: string | null }
  | { type: 'CONFIGURE'; override: QueueSettingsInput }
  | { type: 'CONFIGURE_TOOLS'; layer: unknown }
  | { type: 'END.OBSERVED'; runId: string }
  | { type: 'RUN.DONE'; summary: RunSummary; unadmitted: readonly SteerMessage[]; at: number }
  | { type: 'RUN.PAUSED'; paused: RunPaused; unadmitted: readonly SteerMessage[]; at: number }
  | { type: 'PAUSE.SETTLED'; turn: number; position: number }
  | { type: 'RUN.NOT_STARTED'; at: number }
  | { type: 'PLAN.HELD'; runId: string }
  | { type: 'PLAN.PAUSED'; runId: string; steps: readonly PlanStepWait[]; at: number }
  | { type: 'PLAN.ENDED'; runId: string; summary?: RunSummary };

/** The context of a brand-new session. */
export function initialSessionContext(sessionKey: string): SessionContext {
  return {
    sessionKey,
    queue: [],
    dropped: [],
    droppedOmitted: 0,
    seen: [],
    nextOrder: 1,
    lastEnqueuedAt: null,
    runEndedAt: null,
    drainAt: null,
    interruptUntil: null,
    preferredProfile: null,
    run: null,
    pause: null,
    plans: [],
  };
}
