import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import type { RunRecord, TurnRecord } from '../ledger/ledger.js';
import { isRunActive } from '../policies/queue-admission.js';
import type { QueueSettingsInput } from '../policies/queue-settings.js';
import { admitMessage, type SendResult } from './admit-message.js';
import { streamEvents, type EventStreamOptions } from './event-stream.js';
import { parseInboundMessage, parseQueueSettings, type InboundMessageInput } from './inbound-message.js';
import { parseTimeout, waitForRun, type WaitResult } from './wait-for-run.js';
import { createSessionQueue, type SessionQueue } from './session-queue-handle.js';
import { activityOf, stateOf, type SessionState } from './session-activity.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';
import type { ToolPolicyLayer } from '../policies/tool-policy.js';
import { approveCall, supplyResult, type ApprovalInput, type SupplyInput } from './tool-decisions.js';
import type { z } from 'zod';
import type { planSchema, PlanOptionsInput } from '../plans/plan-schema.js';
import { approvePlan, executePlan, type ApprovePlanInput } from './plan-api.js';
import type { PlanRunResult } from './plan-run.js';
import { abortUndos, assertUndoable, undoRun, type UndoResult } from './undo-run.js';
import { heldPlans, pausedPlanOf } from '../actors/session-plans.js';
import { endHeldPlan } from './plan-end.js';

/** What `status()` reports. */
export interface SessionStatus {
  readonly state: SessionState;
  readonly runId?: string;
  readonly queued: number;
}

/** A chat session: feed messages in, steer, abort, wait, read its record. Cheap to get; hydrates lazily. */
export interface Session {
  readonly key: string;
  /** Accept a message; resolves once it is durable, with what became of it. */
  send(message: InboundMessageInput, options?: QueueSettingsInput): Promise<SendResult>;
  /** `send(text, { mode: 'steer' })`. */
  steer(message: InboundMessageInput): Promise<SendResult>;
  /** Abort the active run (a plan run or an undo too); resolves whether one was active. */
  abort(options?: { reason?: string }): Promise<boolean>;
  /** Wait for the active run to end. @default timeoutMs 15000 (at least 100) */
  waitForEnd(options?: { timeoutMs?: number }): Promise<WaitResult>;
  status(): SessionStatus;
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
  /** Run the compensations of an ended run's tool calls, latest first; failed ones are retried by a later undo. */
  undo(runId: string): Promise<UndoResult>;
  /**
   * This session's own tool-policy layer, applied after the runtime's (it can only narrow them); `null` clears
   * it. Persisted; later runs use it.
   */
  configureTools(layer: ToolPolicyLayer | null): Promise<void>;
  /**
   * Run a plan of tool steps as a run of this session (BEHAVIOUR.md "Plans"); resolves once it completes, fails,
   * is aborted or waits for approval. A cycle (`plan_cycle`) or a dangling dependency (`invalid_input`) is refused
   * before anything runs.
   */
  executePlan(plan: PlanInput, options?: PlanOptionsInput): Promise<PlanRunResult>;
  /** Approve (and reject) steps of a plan run that waits, and resume it; resolves when it stops again. */
  approvePlan(input: ApprovePlanInput): Promise<PlanRunResult>;
}

/** A plan as callers pass it: steps `{ id, tool, args?, dependsOn? }`. */
export type PlanInput = z.input<typeof planSchema>;

/** Create the handle of session `key` (already validated). */
export function createSessionHandle(internals: RuntimeInternals, key: string): Session {
  const { registry, withSession } = internals;
  const session: Session = {
    key,
    async send(input, options) {
      assertOpen(internals);
      const message = parseInboundMessage(input);
      const settings = parseQueueSettings('send: options', options);
      return withSession(key, (live) => admitMessage(internals.admission, live, message, settings));
    },
    steer: (input) => session.send(input, { mode: 'steer' }),
    abort(options) {
      const reason = options?.reason ?? 'aborted by the caller';
      if (typeof reason !== 'string') {
        return Promise.reject(new RuntimeError('invalid_input', 'abort: reason must be a string'));
      }
      const plans = [...(internals.activePlans.get(key)?.values() ?? [])];
      for (const plan of plans) plan.controller.abort(new RuntimeError('cancelled', reason));
      const undos = abortUndos(internals, key, reason);
      const live = registry.live(key);
      // A paused plan holds the session like a paused run: abort ends it (resolves once recorded).
      const paused = live === undefined ? undefined : pausedPlanOf(live.actor.getSnapshot().context);
      if (paused !== undefined)
        return endHeldPlan(internals, key, paused.runId, 'aborted', reason).then(() => true);
      if (live === undefined || !isRunActive(activityOf(live.actor.getSnapshot())))
        return Promise.resolve(plans.length + undos > 0);
      live.actor.send({ type: 'ABORT', status: 'aborted', reason });
      return Promise.resolve(true);
    },
    async waitForEnd(options) {
      const timeoutMs = parseTimeout(options);
      // Through the gate: a session that is not live yet (startup recovery, hibernated) may hold a paused run.
      return withSession(key, (live) => waitForRun(internals, live, timeoutMs));
    },
    status() {
      const live = registry.live(key);
      if (live === undefined) return { state: 'idle', queued: 0 };
      const snapshot = live.actor.getSnapshot();
      const activity = activityOf(snapshot);
      // A plan run the session holds (paused first) is its run when no agent run is.
      const { context } = snapshot;
      const runId = context.run?.runId ?? (pausedPlanOf(context) ?? heldPlans(context)[0])?.runId;
      return {
        state: stateOf(activity),
        queued: snapshot.context.queue.length,
        ...(runId === undefined ? {} : { runId }),
      };
    },
    async configure(settings) {
      assertOpen(internals);
      const override = parseQueueSettings('configure', settings);
      await withSession(key, (live) => {
        live.override = { ...live.override, ...override };
        return registry.persist(live);
      });
    },
    async preferProfile(profileId) {
      assertOpen(internals);
      if (profileId !== null && (typeof profileId !== 'string' || !internals.knowsProfile(profileId))) {
        throw new RuntimeError(
          'invalid_input',
          `preferProfile: no auth profile "${String(profileId)}" is configured`,
        );
      }
      await withSession(key, (live) => {
        live.actor.send({ type: 'PREFER_PROFILE', profileId });
        return registry.persist(live);
      });
    },
    queue: createSessionQueue(internals, key),
    events: (options = {}) =>
      streamEvents(
        {
          ledger: internals.ledger,
          bus: internals.bus,
          clock: internals.clock,
          closed: internals.closed,
          onError: (error) => internals.onError(error),
        },
        { ...options, sessionKey: key },
      ),
    transcript: () => internals.ledger.listTurns(key),
    runs: () => internals.ledger.listRuns(key),
    async approve(input) {
      assertOpen(internals);
      await withSession(key, (live) => approveCall(internals, live, input));
    },
    async supplyToolResult(input) {
      assertOpen(internals);
      await withSession(key, (live) => supplyResult(internals, live, input));
    },
    async undo(runId) {
      assertOpen(internals);
      const id = await assertUndoable(internals, key, runId);
      return withSession(key, (live) => internals.sessionLane.run(key, () => undoRun(internals, live, id)));
    },
    async executePlan(plan, options) {
      assertOpen(internals);
      return withSession(key, (live) => executePlan(internals, live, plan, options ?? {}));
    },
    async approvePlan(input) {
      assertOpen(internals);
      return withSession(key, (live) => approvePlan(internals, live, input));
    },
    async configureTools(layer) {
      assertOpen(internals);
      const parsed = layer === null ? undefined : internals.sessionTools.parseLayer('configureTools', layer);
      await withSession(key, (live) => {
        live.toolPolicy = parsed;
        return registry.persist(live);
      });
    },
  };
  return session;
}
