import type { z } from 'zod';
import type { RuntimeEvent } from '../core/index.js';
import type { RunRecord, TurnRecord } from '../ledger/index.js';
import type { QueueSettingsInput, ToolPolicyLayer } from '../policies/index.js';
import type { planSchema, PlanOptionsInput } from '../plans/index.js';
import type { PlanRunResult, UndoOptions, UndoResult } from '../runner/index.js';
import type { EventStreamOptions } from '../events/index.js';
import type { SendResult } from './admit-message.js';
import type { InboundMessageInput } from './inbound-message.js';
import type { WaitResult } from './wait-for-run.js';
import type { QueueItem, SessionQueue } from './session-queue-handle.js';
import type { SessionStatus } from './session-abort.js';
import type { Controller } from './authority.js';
import type { ApprovalInput, SupplyInput } from './tool-decisions.js';
import type { ApprovePlanInput } from './plan-api.js';

/** A chat session: feed messages in, steer, abort, wait, read its record. Cheap to get; hydrates lazily. */
export interface Session {
  readonly key: string;
  /** Accept a message; resolves once it is durable, with what became of it. */
  send(message: InboundMessageInput, options?: QueueSettingsInput): Promise<SendResult>;
  /** `send(text, { mode: 'steer' })`. */
  steer(message: InboundMessageInput): Promise<SendResult>;
  /**
   * Abort the active run (a plan run or an undo too); resolves whether one was active. With `by` (a sender's id and
   * role) the sender must be allowed to stop the run (`authority.control.stop`), else `forbidden`, nothing aborted.
   */
  abort(options?: { reason?: string; by?: Controller }): Promise<boolean>;
  /** Wait for the active run to end. @default timeoutMs 15000 (at least 100) */
  waitForEnd(options?: { timeoutMs?: number }): Promise<WaitResult>;
  /**
   * Where the session stands. Synchronous, so on a cluster worker it answers for the sessions this worker holds
   * (`idle` elsewhere): `readStatus()` answers from any worker.
   */
  status(): SessionStatus;
  /**
   * `status()` as the worker that holds the session sees it: on a cluster worker, asked of the session's holder
   * (this worker's own answer when no live worker holds it); in one process, `status()`.
   */
  readStatus(): Promise<SessionStatus>;
  /** `queue.list()` as the worker that holds the session sees it, asked the way `readStatus()` asks. */
  readQueue(): Promise<QueueItem[]>;
  /** Override this session's queue settings (merged into the current override; persisted). */
  configure(settings: QueueSettingsInput): Promise<void>;
  /** Make runs of this session try this auth profile first while it is available (`null` clears it; persisted). */
  preferProfile(profileId: string | null): Promise<void>;
  readonly queue: SessionQueue;
  /** Replay this session's recorded events after `after`, then follow live ones. */
  events(options?: EventStreamOptions): AsyncIterable<RuntimeEvent>;
  /** The turns recorded for this session, in order. */
  transcript(): Promise<TurnRecord[]>;
  /** The runs recorded for this session, in start order (status, times, usage, error, text). */
  runs(): Promise<RunRecord[]>;
  /**
   * Decide on a call waiting for approval: `approve` runs it, `reject` feeds a denial (with `message`) back to
   * the model, `edit` runs it with `args`; `remember` skips later approvals of that tool in the run or session.
   * The paused run continues once nothing waits.
   */
  approve(input: ApprovalInput): Promise<void>;
  /** Supply the result (`output`) or failure (`error`) of a deferred call; the run continues once nothing waits. */
  supplyToolResult(input: SupplyInput): Promise<void>;
  /**
   * Run the compensations of an ended run's tool calls, latest first; failed ones are retried by a later undo, ones
   * in doubt (started, outcome unknown) are reported and run again only with `inDoubt: 'retry'`.
   */
  undo(runId: string, options?: UndoOptions): Promise<UndoResult>;
  /**
   * This session's own tool-policy layer, applied after the runtime's (it can only narrow them); `null` clears
   * it. Persisted; later runs use it.
   */
  configureTools(layer: ToolPolicyLayer | null): Promise<void>;
  /**
   * Run a plan of tool steps as a run of this session (docs/semantics.md, "Plans"); resolves once it completes, fails,
   * is aborted or waits for approval. A cycle (`plan_cycle`) or a dangling dependency (`invalid_input`) is refused
   * before anything runs.
   */
  executePlan(plan: PlanInput, options?: PlanOptionsInput): Promise<PlanRunResult>;
  /** Approve (and reject) steps of a plan run that waits, and resume it; resolves when it stops again. */
  approvePlan(input: ApprovePlanInput): Promise<PlanRunResult>;
  /**
   * For chat adapters: a reply block's send was in flight when the process died and the platform cannot show
   * whether it arrived, or the send failed. Emits `delivery.in_doubt` on this session (never a silent duplicate
   * or drop). Bad input: `invalid_input`, nothing emitted.
   */
  reportDeliveryInDoubt(input: DeliveryInDoubt): Promise<void>;
}

/** What `reportDeliveryInDoubt` reports: the adapter's consumer, the run and block, and why. */
export interface DeliveryInDoubt {
  readonly consumer: string;
  readonly runId: string;
  readonly blockIndex: number;
  readonly reason: string;
}

/** A plan as callers pass it: steps `{ id, tool, args?, dependsOn? }`. */
export type PlanInput = z.input<typeof planSchema>;
