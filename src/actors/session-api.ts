import { z } from 'zod';
import { type RuntimeEvent, RuntimeError, storableTextProblem } from '../core/index.js';
import type { RunRecord, TurnRecord } from '../ledger/index.js';
import { type QueueSettingsInput, type ToolPolicyLayer, resolveToolPolicy } from '../policies/index.js';
import type { planSchema, PlanOptionsInput } from '../plans/index.js';
import type { PlanRunResult, UndoOptions, UndoResult } from '../runner/index.js';
import type { EventStreamOptions } from '../events/index.js';
import type { SendResult } from './admit-message.js';
import type { InboundMessageInput } from './inbound-message.js';
import type { WaitResult, SessionStatus, ApprovePlanInput } from './session-runs.js';
import type { Controller } from './authority.js';
import type { ApprovalInput, SupplyInput } from './operator-answers.js';
import type { QueuedMessage } from './session-context.js';
import type { LiveSession } from './session-registry.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';
import {
  type Tool,
  currentTools,
  isToolSource,
  sameTools,
  type ToolEntry,
  createToolRegistry,
  type ToolRegistry,
} from '../tools/index.js';

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

/** A queued message as `queue.list()` shows it. */
export interface QueueItem {
  readonly messageId: string;
  readonly text: string;
  readonly mode: QueuedMessage['mode'];
  readonly enqueuedAt: number;
}

/** A session's pending queue. */
export interface SessionQueue {
  /** The queued messages, in the order they will run. */
  list(): QueueItem[];
  /** Remove one queued message; resolves whether it was queued. */
  cancel(messageId: string): Promise<boolean>;
  /** Remove every queued message; resolves how many were removed. */
  clear(): Promise<number>;
}

function remove(
  internals: RuntimeInternals,
  live: LiveSession,
  messageIds: readonly string[],
  reason: 'cancelled' | 'cleared',
) {
  if (messageIds.length === 0) return Promise.resolve();
  live.actor.send({ type: 'CANCEL', messageIds });
  for (const messageId of messageIds) internals.emit(live, { type: 'message.dropped', messageId, reason });
  return internals.services.ledger.updateMessages(live.key, messageIds, { status: 'cancelled' });
}

/** The queue handle of session `key`. */
export function createSessionQueue(internals: RuntimeInternals, key: string): SessionQueue {
  return {
    list() {
      const live = internals.registry.live(key);
      if (live === undefined) return [];
      return live.actor.getSnapshot().context.queue.map((item) => ({
        messageId: item.messageId,
        text: item.text,
        mode: item.mode,
        enqueuedAt: item.enqueuedAt,
      }));
    },
    async cancel(messageId) {
      assertOpen(internals);
      if (typeof messageId !== 'string' || messageId.length === 0) {
        throw new RuntimeError('invalid_input', 'queue.cancel: messageId must be a non-empty string');
      }
      return internals.withSession(key, async (live) => {
        const queued = live.actor.getSnapshot().context.queue.some((item) => item.messageId === messageId);
        await remove(internals, live, queued ? [messageId] : [], 'cancelled');
        return queued;
      });
    },
    async clear() {
      assertOpen(internals);
      return internals.withSession(key, async (live) => {
        const messageIds = live.actor.getSnapshot().context.queue.map((item) => item.messageId);
        await remove(internals, live, messageIds, 'cleared');
        return messageIds.length;
      });
    },
  };
}

/** One tool-policy layer: `allow` (empty allows all) and `deny` (wins), names, globs or `group:name`. */
export const toolPolicyLayerSchema = z
  .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
  .strict();

/** The tool registries of a runtime: its own policy layers, then a session's layer on top. */
export interface SessionTools {
  /**
   * The registry for a session with this layer (`undefined`: the runtime's layers only), then `last` (the subagent
   * layers), which only narrow.
   */
  registryFor(layer: unknown, last?: readonly ToolPolicyLayer[]): ToolRegistry;
  /** Validate a session's layer; `invalid_input` naming the problem. */
  parseLayer(what: string, layer: unknown): ToolPolicyLayer;
  /** A configured tool by name, whatever the policy says (undo of a tool the policy removed since). */
  byName(name: string): Tool | undefined;
}

/** The registries of one tool list, built once per distinct layer. */
function createToolState(
  tools: readonly Tool[],
  layers: readonly ToolPolicyLayer[],
  groups: Record<string, string[]>,
) {
  const names = tools.map((tool) => tool.name);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const registries = new Map<string, ToolRegistry>();
  const registryOf = (sessionLayers: readonly ToolPolicyLayer[]): ToolRegistry => {
    const key = JSON.stringify(sessionLayers);
    let registry = registries.get(key);
    if (registry === undefined) {
      const allowed = resolveToolPolicy(names, [...layers, ...sessionLayers], groups).allowed;
      registry = createToolRegistry(tools, new Set(allowed));
      registries.set(key, registry);
    }
    return registry;
  };
  // Most sessions have no layer of their own: their registry is built once and found without a key.
  return { tools, names, byName, registryOf, base: registryOf([]) };
}

/**
 * Registries by session layer, built once per distinct layer: a session layer only narrows what the runtime's
 * layers left (no grant-back), and the subagent layer of the brief is this same mechanism one level down. A tool
 * source (an MCP server's list) is read again for each registry asked for, so the next run sees a changed list.
 */
export function createSessionTools(options: {
  tools: readonly ToolEntry[];
  layers: readonly ToolPolicyLayer[];
  groups: Record<string, string[]>;
}): SessionTools {
  const { layers, groups } = options;
  const dynamic = options.tools.some(isToolSource);
  let state = createToolState(currentTools(options.tools), layers, groups);
  const current = () => {
    if (!dynamic) return state;
    const tools = currentTools(options.tools);
    if (sameTools(tools, state.tools)) return state;
    try {
      state = createToolState(tools, layers, groups);
    } catch {
      // A changed list that clashes (a name used twice) keeps the last good one rather than failing every run.
    }
    return state;
  };
  const parseLayer = (what: string, layer: unknown): ToolPolicyLayer => {
    const parsed = toolPolicyLayerSchema.safeParse(layer);
    if (!parsed.success) throw new RuntimeError('invalid_input', `${what}: ${z.prettifyError(parsed.error)}`);
    // Compiles the layer: an unknown group or a bad glob throws invalid_input here, not in a run.
    resolveToolPolicy(current().names, [parsed.data], groups);
    return parsed.data;
  };
  return {
    registryFor: (layer, last = []) => {
      const { base, registryOf } = current();
      if ((layer === undefined || layer === null) && last.length === 0) return base;
      try {
        const own = layer === undefined || layer === null ? [] : [parseLayer('session tool policy', layer)];
        return registryOf([...own, ...last]);
      } catch {
        // A stored layer that no longer compiles (a group removed from the config) denies everything rather
        // than granting what it meant to narrow.
        return registryOf([{ deny: ['*'] }]);
      }
    },
    parseLayer,
    byName: (name) => current().byName.get(name),
  };
}

/** Check `undo()`'s options: `inDoubt` is 'skip' or 'retry'; anything else is `invalid_input`. */
export function parseUndoOptions(options: unknown): UndoOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) {
    throw new RuntimeError('invalid_input', 'undo: options must be an object');
  }
  const { inDoubt, ...rest } = options as { inDoubt?: unknown };
  if (Object.keys(rest).length > 0) {
    throw new RuntimeError('invalid_input', `undo: unknown option "${Object.keys(rest)[0] ?? ''}"`);
  }
  if (inDoubt !== undefined && inDoubt !== 'skip' && inDoubt !== 'retry') {
    throw new RuntimeError('invalid_input', 'undo: inDoubt must be "skip" or "retry"');
  }
  return inDoubt === undefined ? {} : { inDoubt };
}

/** Check that `runId` names an ended run of this session; `not_found` or `invalid_input` otherwise. */
export async function assertUndoable(
  internals: RuntimeInternals,
  sessionKey: string,
  runId: unknown,
): Promise<string> {
  if (typeof runId !== 'string' || runId.length === 0) {
    throw new RuntimeError('invalid_input', 'undo: runId must be a non-empty string');
  }
  const problem = storableTextProblem(runId);
  if (problem !== undefined) throw new RuntimeError('invalid_input', `undo: runId ${problem}`);
  const run = await internals.services.ledger.getRun(runId);
  if (run === undefined || run.sessionKey !== sessionKey) {
    throw new RuntimeError('not_found', `undo: session "${sessionKey}" has no run "${runId}"`);
  }
  if (
    run.status === 'running' ||
    run.status === 'awaiting_approval' ||
    run.status === 'awaiting_tool_results'
  ) {
    throw new RuntimeError(
      'invalid_input',
      `undo: run "${runId}" has not ended (abort it or wait for it first)`,
    );
  }
  return runId;
}
