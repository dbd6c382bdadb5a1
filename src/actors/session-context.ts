import type { InlineAttachment, StoredPart, Disposition, PauseState } from '../core/index.js';
import type {
  AbortStatus,
  RunKind,
  SteerMessage,
  PausedCallInfo,
  RunPaused,
  RunResult,
  RunSummary,
  WaitingCall,
  PlanStepWait,
} from '../runner/index.js';
import {
  type Admission,
  type QueueSettings,
  type QueueSettingsInput,
  composeMessageText,
  inlineAttachmentsOf,
  buildCollectPrompt,
  buildDroppedNotice,
  takeCollectBatch,
  attributeMessage,
  rememberMessage,
  drainDueAt,
  keepDropSummary,
} from '../policies/index.js';
import type { Snapshot } from 'xstate';
import type { SessionRecord } from '../ledger/index.js';
import type { SessionActor } from './session-machine.js';

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

/** The run a session is executing: an agent run (its messages), or a plan run or an undo (no messages). */
export interface ActiveRun extends RunBatch {
  /** What runs (absent in snapshots from before runs had kinds). @default 'agent' */
  readonly kind?: RunKind;
  /** A plan run's or an undo's job, which the runtime keeps (`RunJobs`). */
  readonly job?: string;
  readonly startedAt: number;
  readonly items: readonly QueuedMessage[];
  /** The session's preferred auth profile when the run started. */
  readonly preferredProfile?: string;
  /** Set when the run continues after a pause. */
  readonly resume?: RunResumption;
}

/**
 * A call a paused run waits for, and whether it has been answered (decided or supplied). The field keeps its stored
 * name, `settled`: hibernated and paused sessions' snapshots hold it.
 */
export interface PausedCallState extends PausedCallInfo {
  readonly settled: boolean;
}

/** Why the session's run is paused, what it waits for, and when the pause expires (absolute time). */
export interface PauseContext {
  readonly state: PauseState;
  readonly calls: readonly PausedCallState[];
  readonly until: number;
}

/** A step a paused plan run waits for (the runner's type: its plan code reports them). */
export type { PlanStepWait };

/**
 * A plan run of the session as its plan code reports it (PLAN.HELD / PAUSED / ENDED), from `executePlan` (or
 * `approvePlan`) until it ends. The machine runs the plan as its run; a hold only keeps an idle session from
 * starting another run (a plan a crash cut, until recovery starts it), and a paused hold is adopted as the
 * machine's paused run. `running` covers the wait behind the session's active run too.
 */
export interface PlanHold {
  readonly runId: string;
  readonly state: 'running' | 'awaiting_approval';
  /** With `awaiting_approval`: the steps it waits for. */
  readonly steps: readonly PlanStepWait[];
}

/** A plan run or an undo handed to the session while another run is active: it starts when that run ends. */
export interface PendingWork {
  readonly runId: string;
  readonly kind: 'plan' | 'undo';
  readonly job: string;
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
  /** Plan runs and undos waiting for the active run to end, oldest first (absent: none). */
  readonly work?: readonly PendingWork[];
  /** The session's plan runs not ended yet, oldest first (absent in snapshots from before plans were held). */
  readonly plans?: readonly PlanHold[];
  /** The session's queue-settings override (`configure`); the ledger row stores it (absent when none). */
  readonly override?: QueueSettingsInput;
  /** The session's own tool-policy layer, as stored (the runtime validates it); the ledger row stores it. */
  readonly toolPolicy?: unknown;
  /**
   * The end of the session's last run, until a run pauses: a `waitForEnd()` that did not see it end answers it
   * instead of `idle`, so a run that failed before its sender asked is never reported as nothing. Whether a waiter
   * saw it is kept outside the machine (actors/session-runs.ts), so seeing an end is no machine step. Not persisted
   * (the ledger has the run).
   */
  readonly lastEnd?: RunSummary | undefined;
}

/** What the session actor emits (`actor.on`): a run (or a plan run) of the session paused or ended. */
export interface RunSettled {
  readonly type: 'run.settled';
  readonly result: RunResult;
  /**
   * A plan run's pause: settles once the plan recorded it and its events were delivered (an end's, and an agent
   * run's pause, are known by the result: `writeOf` in session-runs.ts).
   */
  readonly written?: Promise<void>;
}

/**
 * What the session actor emits as it decides on a message (ADMIT): how a durable message ended up
 * (`message.admitted`), or, for a preview of a message not written yet, the status to record or the
 * refusal (`admission.previewed`). A drain that takes the queue into a run emits `run.taken`. An answer to a
 * waiting call (DECIDE) answers it (`call.answered`) or is refused (`decision.refused`).
 */
export type SessionEmitted =
  RunSettled | MessageAdmitted | AdmissionPreviewed | RunTaken | CallAnswered | DecisionRefused | RunStarting;

/**
 * The machine entered `running`: `start` starts the run. XState hands emitted events to listeners once the step
 * that emitted them is done, so the run starts on the snapshot that holds it (`createSessionActor` listens).
 */
export interface RunStarting {
  readonly type: 'run.starting';
  readonly start: () => void;
}

/** DECIDE answered a waiting call; `state` is the pause after it (absent: nothing waits, the run goes on). */
export interface CallAnswered {
  readonly type: 'call.answered';
  readonly call: WaitingCall;
  readonly state?: PauseState;
}

/** DECIDE was refused: no such call waits, or it waits for the other answer, or it was answered already. */
export interface DecisionRefused {
  readonly type: 'decision.refused';
  readonly toolCallId: string;
  readonly code: 'not_found' | 'invalid_input';
  readonly message: string;
}

/** A durable message's outcome, as the ADMIT that took it left the session. */
export interface MessageAdmitted {
  readonly type: 'message.admitted';
  readonly outcome: Admitted;
}

/** A preview's decision on a message not written yet (a `reject` refuses it; else its kind sets the inbox status). */
export interface AdmissionPreviewed {
  readonly type: 'admission.previewed';
  readonly messageId: string;
  readonly admission: Admission;
}

/** The queue drained into a new run, which holds these messages. */
export interface RunTaken {
  readonly type: 'run.taken';
  readonly runId: string;
  readonly messageIds: readonly string[];
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
 * it was written with) and `remember`: whether it came with a platform id to keep for the dedupe window. An ADMIT
 * without `recorded` is a preview of a message not written yet (session-admission.ts `previewAdmission`): the
 * machine decides (and may refuse) and emits its decision; nothing changes.
 */
export type SessionEvent =
  | {
      type: 'ADMIT';
      item: QueuedMessage;
      settings: QueueSettings;
      recorded?: 'steered' | 'pending';
      at: number;
      remember: boolean;
      /** How long an interrupting message may wait for the interrupted run to end before it runs anyway. */
      waitMs: number;
      /**
       * The id of the run the message starts, when its admission was decided and acknowledged before the actor
       * started (a session admitted on its loaded rows): the machine starts that run under this id.
       */
      runId?: string;
    }
  | { type: 'ABORT'; status: AbortStatus; reason: string }
  | { type: 'START'; kind: 'plan' | 'undo'; runId: string; job: string; at: number }
  | { type: 'CANCEL'; messageIds: readonly string[] }
  | { type: 'HYDRATED' }
  | { type: 'PREFER_PROFILE'; profileId: string | null }
  | { type: 'CONFIGURE'; override: QueueSettingsInput }
  | { type: 'CONFIGURE_TOOLS'; layer: unknown }
  | { type: 'RUN.DONE'; summary: RunSummary; unadmitted: readonly SteerMessage[]; at: number }
  /** The end a run's close wrote instead of the one adopted (a failed commit rewritten `failed`, or `crashed`). */
  | { type: 'RUN.CORRECTED'; summary: RunSummary }
  | { type: 'RUN.PAUSED'; paused: RunPaused; unadmitted: readonly SteerMessage[]; at: number }
  | DecideEvent
  | { type: 'RUN.NOT_STARTED'; at: number }
  | { type: 'PLAN.HELD'; runId: string }
  | {
      type: 'PLAN.PAUSED';
      runId: string;
      steps: readonly PlanStepWait[];
      at: number;
      written?: Promise<void>;
    }
  | { type: 'PLAN.ENDED'; runId: string; summary?: RunSummary };

/**
 * An operator's answer to a call the paused run waits for: a decision (`approve()`) or a result
 * (`supplyToolResult()`). The machine's `decides` guard answers the call or refuses the answer (session-pause.ts
 * `decisionOn`), and emits which (`call.answered`, `decision.refused`).
 */
export interface DecideEvent {
  readonly type: 'DECIDE';
  readonly toolCallId: string;
  readonly answer: 'approval' | 'deferred';
  /** The request the answer is for: refused when the call now waits on another (see `approvalIdOf`). */
  readonly approvalId?: string;
}

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

/** What a session's ledger row stores beside its snapshot: the settings of the machine's context. */
export interface SessionSettings {
  readonly override?: QueueSettingsInput;
  readonly toolPolicy?: unknown;
}

/** The settings of a stored session row, as the machine's context holds them (none when the row has none). */
export function settingsOf(record: SessionRecord | undefined): SessionSettings {
  const override: QueueSettingsInput = { ...(record?.override ?? {}) };
  return {
    ...(Object.keys(override).length === 0 ? {} : { override }),
    ...(record?.toolPolicy === undefined ? {} : { toolPolicy: record.toolPolicy }),
  };
}

/** The context with exactly the row's settings (the row's columns are where they are stored). */
export function withSettings(context: SessionContext, settings: SessionSettings): SessionContext {
  const { override: _override, toolPolicy: _toolPolicy, ...rest } = context;
  return { ...rest, ...settings };
}

/** A restorable snapshot with the row's settings in its context. */
export function snapshotWithSettings(
  snapshot: Snapshot<unknown>,
  settings: SessionSettings,
): Snapshot<unknown> {
  const persisted = snapshot as unknown as { context: SessionContext };
  return { ...persisted, context: withSettings(persisted.context, settings) } as unknown as Snapshot<unknown>;
}

/**
 * The ledger row of a live session: its settings go to their columns, the snapshot without them (nor the
 * unobserved end, which only a live session answers).
 */
export function recordOf(
  session: {
    readonly key: string;
    readonly actor: SessionActor;
    readonly epoch: number;
    readonly lastSeq: number;
  },
  now: number,
): SessionRecord {
  const snapshot = session.actor.getPersistedSnapshot() as unknown as { context: SessionContext };
  const { override, toolPolicy, lastEnd: _live, ...context } = snapshot.context;
  return {
    sessionKey: session.key,
    override: override ?? {},
    ...(toolPolicy === undefined ? {} : { toolPolicy }),
    snapshot: { ...snapshot, context },
    epoch: session.epoch,
    lastSeq: session.lastSeq,
    updatedAt: now,
  };
}

/**
 * Take a newly accepted message's arrival rank and, when it came with a platform id (`remember`), record the id
 * for the dedupe window. Ids the runtime generated can never be redelivered, so they are not remembered.
 */
export function accept(
  context: SessionContext,
  messageId: string,
  at: number,
  remember: boolean,
): SessionContext {
  const seen = remember ? rememberMessage(context.seen, messageId, at) : context.seen;
  return { ...context, seen, nextOrder: context.nextOrder + 1 };
}

/**
 * Put a message at the back of the queue, dropping the oldest first when the cap says so; the dropped message's
 * summary is kept, at most `summaryLimit` of them (the rest are counted).
 */
export function enqueue(
  context: SessionContext,
  item: QueuedMessage,
  dropOldest: boolean,
  summary: string | null,
  summaryLimit: number,
): SessionContext {
  const queue = dropOldest ? context.queue.slice(1) : context.queue;
  const next = { ...context, queue: [...queue, item], lastEnqueuedAt: item.enqueuedAt };
  if (summary === null) return next;
  const kept = keepDropSummary(
    { kept: context.dropped, omitted: context.droppedOmitted ?? 0 },
    summary,
    summaryLimit,
  );
  return { ...next, dropped: kept.kept, droppedOmitted: kept.omitted };
}

/** When the queue drains: at once for an interrupting message in time, else debounce capped by maxWait. */
export function drainAtFor(context: SessionContext, now: number): number | null {
  const head = context.queue[0];
  const last = context.queue[context.queue.length - 1];
  if (head === undefined || last === undefined) return null;
  if (head.mode === 'interrupt' && context.interruptUntil !== null && now <= context.interruptUntil)
    return now;
  return drainDueAt({
    lastEnqueuedAt: context.lastEnqueuedAt ?? now,
    runEndedAt: context.runEndedAt ?? now,
    debounceMs: last.debounceMs,
    maxWaitMs: last.maxWaitMs,
  });
}

/**
 * The text the model sees for one message: with `attribute`, a line the runtime writes naming the sender and role,
 * then the message escaped so that no line of it passes for such a line (docs/semantics.md, "Authority in group
 * chats").
 */
export function messageTextFor(item: QueuedMessage): string {
  const text = composeMessageText(item.text, item.parts);
  if (item.attribute !== true || item.role === undefined) return text;
  return attributeMessage(text, { id: item.senderId, name: item.senderName, role: item.role });
}

function promptFor(items: readonly QueuedMessage[], dropped: readonly string[], omitted: number): string {
  const texts = items.map((item) => ({ text: messageTextFor(item) }));
  const first = texts[0] as { text: string };
  if (items.length > 1) return buildCollectPrompt(texts, { dropped, droppedOmitted: omitted });
  const notice = buildDroppedNotice(dropped, omitted);
  return notice === '' ? first.text : `${notice}\n\n${first.text}`;
}

/**
 * Take the next run off the queue: a collect-mode head takes every leading collect message it can merge with
 * (same channel, thread and sender role) as ONE run; any other head runs alone.
 */
export function takeNextRun(context: SessionContext, runId: string, now: number): SessionContext {
  const head = context.queue[0];
  if (head === undefined) return context;
  let items: QueuedMessage[] = [head];
  if (head.mode === 'collect') {
    const leading: QueuedMessage[] = [];
    for (const item of context.queue) {
      if (item.mode !== 'collect') break;
      leading.push(item);
    }
    items = takeCollectBatch(leading).batch;
  }
  return beginRun({ ...context, queue: context.queue.slice(items.length) }, runId, items, now);
}

/** Make `items` the active run (the dropped-message notice goes into its prompt). */
export function beginRun(
  context: SessionContext,
  runId: string,
  items: readonly QueuedMessage[],
  now: number,
): SessionContext {
  const attachments = items.flatMap((item) => inlineAttachmentsOf(item.parts));
  const run: ActiveRun = {
    runId,
    prompt: promptFor(items, context.dropped, context.droppedOmitted ?? 0),
    ...(attachments.length === 0 ? {} : { attachments }),
    messageIds: items.map((item) => item.messageId),
    consumedAs: items.length > 1 ? 'collected' : 'consumed',
    startedAt: now,
    items,
    ...(context.preferredProfile === null ? {} : { preferredProfile: context.preferredProfile }),
  };
  return { ...context, run, dropped: [], droppedOmitted: 0, drainAt: null, interruptUntil: null };
}

/**
 * A run ended: steer messages it never admitted go back to the front of the queue as followups (never lost),
 * and the drain deadline is set.
 */
export function endRun(
  context: SessionContext,
  unadmitted: readonly SteerMessage[],
  toItem: (message: SteerMessage) => QueuedMessage,
  now: number,
): SessionContext {
  const returned = unadmitted.map(toItem);
  const queue = returned.length > 0 ? [...returned, ...context.queue] : context.queue;
  const ended: SessionContext = { ...context, run: null, queue, runEndedAt: now };
  return { ...ended, drainAt: drainAtFor(ended, now) };
}

/** The plan runs and undos waiting for the active run (none in a snapshot from before they did). */
export function pendingWork(context: SessionContext): readonly PendingWork[] {
  return context.work ?? [];
}

/** A plan run or an undo waits for the active run to end. */
export function queueWork(context: SessionContext, work: PendingWork): SessionContext {
  const { runId, kind, job } = work;
  return { ...context, work: [...pendingWork(context), { runId, kind, job }] };
}

/** Make a plan run or an undo the active run (queued messages stay queued behind it). */
export function beginWork(context: SessionContext, work: PendingWork, now: number): SessionContext {
  const { runId, kind, job } = work;
  const run: ActiveRun = {
    runId,
    kind,
    job,
    prompt: '',
    messageIds: [],
    consumedAs: 'consumed',
    startedAt: now,
    items: [],
  };
  return { ...context, run };
}

/** Start the oldest plan run or undo that waits. */
export function takeWork(context: SessionContext, now: number): SessionContext {
  const [head, ...rest] = pendingWork(context);
  return head === undefined ? context : beginWork({ ...context, work: rest }, head, now);
}

/** True when the session's active run is a plan run or an undo. */
export function isWorkRun(run: ActiveRun | null): boolean {
  return run !== null && run.kind !== undefined && run.kind !== 'agent';
}

/** How long the drain waits before it retries a run that could not start. */
export const startRetryDelayMs = 1000;

/** A run that could not start: its messages go back to the front of the queue, in order, and the drain retries. */
export function returnRun(context: SessionContext, now: number): SessionContext {
  if (context.run === null) return context;
  return {
    ...context,
    run: null,
    queue: [...context.run.items, ...context.queue],
    runEndedAt: now,
    interruptUntil: null,
    drainAt: now + startRetryDelayMs,
  };
}

/** Remove messages from the queue (cancel / clear). */
export function removeQueued(context: SessionContext, messageIds: readonly string[]): SessionContext {
  const removing = new Set(messageIds);
  const queue = context.queue.filter((item) => !removing.has(item.messageId));
  return { ...context, queue, drainAt: queue.length === 0 ? null : context.drainAt };
}
