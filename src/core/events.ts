import { z } from 'zod';
import { approvalDecisions, approvalMemories } from './approvals.js';
import { dispositions } from './dispositions.js';
import { dropReasons } from './drop-reasons.js';
import { errorCodes } from './errors.js';
import { failureReasons } from './failure-reasons.js';
import { pauseStates } from './pause-states.js';
import { queueModes } from './queue-modes.js';
import { runStatuses } from './run-statuses.js';
import { thinkingLevels } from './thinking-levels.js';
import { toolSkipReasons } from './tool-skip-reasons.js';

export { runStatuses, type RunStatus } from './run-statuses.js';
export { pauseStates, type PauseState } from './pause-states.js';
export { dropReasons, type DropReason } from './drop-reasons.js';

const errorInfo = z.object({ code: z.enum(errorCodes), message: z.string() });
const usage = z.object({ inputTokens: z.number(), outputTokens: z.number() });

/** How a call that waited for approval was settled: by an operator, by the pause expiring, or by the run ending. */
const approvalOutcomes = [...approvalDecisions, 'expired', 'cancelled'] as const;

/** The payload of every event type, keyed by type. Envelope fields are added by `eventEnvelope`. */
const payloads = {
  'message.received': {
    messageId: z.string(),
    text: z.string(),
    mode: z.enum(queueModes),
    disposition: z.enum(dispositions),
    senderId: z.string().optional(),
    // The sender's name and role (docs/semantics.md, "Authority in group chats"); no role: the default role.
    senderName: z.string().optional(),
    senderRole: z.string().optional(),
    channel: z.string().optional(),
    // The sender's W3C trace context, when it passed one: a trace of the run links to it (agentlanes/otel).
    traceparent: z.string().optional(),
  },
  'message.queued': { messageId: z.string(), position: z.number() },
  'message.collected': { messageId: z.string(), position: z.number() },
  'message.steered': { messageId: z.string() },
  'message.admitted': { messageIds: z.array(z.string()) },
  'message.dropped': {
    messageId: z.string(),
    reason: z.enum(dropReasons),
    summary: z.string().optional(),
  },
  'message.duplicate': { messageId: z.string() },
  'message.rejected': { messageId: z.string(), code: z.enum(errorCodes) },
  'run.started': {
    messageIds: z.array(z.string()),
    provider: z.string(),
    model: z.string(),
  },
  'run.ended': {
    status: z.enum(runStatuses),
    error: errorInfo.optional(),
    text: z.string(),
    usage,
    durationMs: z.number(),
  },
  'assistant.delta': { delta: z.string() },
  'assistant.reasoning': { delta: z.string() },
  // `blockId` is `<runId>:<index>`: stable across re-deliveries, so a bot can deduplicate a block it already sent.
  'assistant.block': { index: z.number(), blockId: z.string(), text: z.string() },
  'assistant.final': { text: z.string() },
  'run.paused': { state: z.enum(pauseStates), toolCallIds: z.array(z.string()) },
  // A paused run continues (`from`), or a run cut by a crash or a worker's death resumes from its last durable
  // boundary under the same run id (`attempt` counts such resumes from 1, `reason` says what cut it).
  'run.resumed': {
    from: z.enum(pauseStates).optional(),
    attempt: z.number().optional(),
    reason: z.enum(['crash', 'takeover']).optional(),
  },
  'tool.called': {
    toolCallId: z.string(),
    tool: z.string(),
    args: z.unknown(),
    stepId: z.string().optional(),
  },
  'tool.succeeded': {
    toolCallId: z.string(),
    tool: z.string(),
    output: z.unknown(),
    durationMs: z.number(),
    stepId: z.string().optional(),
  },
  'tool.failed': {
    toolCallId: z.string(),
    tool: z.string(),
    error: errorInfo,
    stepId: z.string().optional(),
  },
  'tool.skipped': { toolCallId: z.string(), tool: z.string(), reason: z.enum(toolSkipReasons) },
  // A call that started before a crash and has no recorded outcome: it is not run again on its own; the run pauses
  // for an operator (approve: run it again, reject: the model hears its outcome is unknown, or supply the outcome).
  'tool.in_doubt': {
    toolCallId: z.string(),
    tool: z.string(),
    args: z.unknown(),
    reason: z.string(),
    stepId: z.string().optional(),
    approvalId: z.string().optional(),
  },
  'tool.deferred': { toolCallId: z.string(), tool: z.string(), args: z.unknown() },
  'tool.supplied': { toolCallId: z.string(), tool: z.string(), isError: z.boolean() },
  // `approvalId` names this request (see `approvalIdOf`): answer it with `approve({ approvalId })` or
  // `approvePlan({ approvalIds })` and an answer meant for an earlier request of the same call is refused.
  'approval.requested': {
    toolCallId: z.string(),
    tool: z.string(),
    args: z.unknown(),
    stepId: z.string().optional(),
    approvalId: z.string().optional(),
  },
  'approval.resolved': {
    toolCallId: z.string(),
    tool: z.string(),
    decision: z.enum(approvalOutcomes),
    remember: z.enum(approvalMemories).optional(),
    message: z.string().optional(),
  },
  // `index` numbers a run's compensations (1, 2, …), in the order their calls succeeded.
  'undo.enqueued': { toolCallId: z.string(), tool: z.string(), args: z.unknown(), index: z.number() },
  'undo.executed': { toolCallId: z.string(), tool: z.string(), index: z.number() },
  'undo.failed': { toolCallId: z.string(), tool: z.string(), index: z.number(), error: errorInfo },
  // A compensation that started and has no recorded outcome (cut off by abort, close, a timeout or a crash): it is
  // not run again unless the operator decides so (`undo(runId, { inDoubt: 'retry' })`).
  'undo.in_doubt': { toolCallId: z.string(), tool: z.string(), index: z.number(), reason: z.string() },
  'step.executed': {
    stepId: z.string(),
    tool: z.string(),
    success: z.boolean(),
    executionTime: z.number(),
    retries: z.number(),
    error: errorInfo.optional(),
  },
  'lane.waited': { lane: z.string(), waitedMs: z.number(), position: z.number() },
  'failover.rotated': {
    provider: z.string(),
    model: z.string(),
    fromProfile: z.string(),
    toProfile: z.string().optional(),
    reason: z.enum(failureReasons),
  },
  'failover.fallback': {
    fromProvider: z.string(),
    fromModel: z.string(),
    toProvider: z.string(),
    toModel: z.string(),
    reason: z.enum(failureReasons),
  },
  'profile.cooldown': {
    profileId: z.string(),
    reason: z.enum(failureReasons),
    until: z.number(),
    model: z.string().optional(),
  },
  // Every profile of every candidate model is cooling: the run waits `waitMs` for `profileId` to come back.
  'failover.waiting': {
    provider: z.string(),
    model: z.string(),
    profileId: z.string(),
    waitMs: z.number(),
    until: z.number(),
  },
  // A ledger row failed validation: it is skipped (replay goes on) and reported once.
  'ledger.corrupt': { table: z.string(), row: z.string(), message: z.string() },
  // The ledger cannot take a write (a full disk, a read-only file, an unreachable database): active runs stop and
  // writes are retried with backoff. Runtime-wide (session key ''), delivered live and never recorded: the ledger
  // cannot take it. `ledger.available` follows, recorded, once writes commit again and the sessions were reconciled.
  'ledger.unavailable': { code: z.enum(errorCodes), message: z.string() },
  'ledger.available': { unavailableMs: z.number() },
  // A chat adapter's reply block was being sent when the process died (and the platform cannot show whether it
  // arrived), or its send failed: it is neither sent again (a duplicate) nor forgotten (a silent drop).
  // `blockIndex` -1: the run's interrupted or failure notice.
  'delivery.in_doubt': { consumer: z.string(), blockIndex: z.number(), reason: z.string() },
  // A run's spawn_subagent call started a child session (`<parent>/sub:<id>`), or the child's run ended; both on
  // the parent session, with the spawning run as runId.
  'subagent.spawned': {
    toolCallId: z.string(),
    parentKey: z.string(),
    childKey: z.string(),
    task: z.string(),
  },
  'subagent.ended': {
    toolCallId: z.string(),
    parentKey: z.string(),
    childKey: z.string(),
    childRunId: z.string().optional(),
    status: z.enum(runStatuses),
    error: errorInfo.optional(),
  },
  'thinking.lowered': { model: z.string(), from: z.enum(thinkingLevels), to: z.enum(thinkingLevels) },
  'compaction.started': { attempt: z.number(), messages: z.number() },
  'compaction.ended': { attempt: z.number(), before: z.number(), after: z.number(), truncated: z.boolean() },
  'cost.updated': {
    provider: z.string(),
    model: z.string(),
    profileId: z.string().optional(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    cost: z.number(),
    cumulativeCost: z.number(),
    priced: z.boolean(),
    // When the call's successful attempt started, and why the model stopped: a trace's model-call span (agentlanes/otel).
    startedAt: z.number().optional(),
    finishReason: z.string().optional(),
  },
} as const;

/** Every event type, `noun.verb` in the past tense. */
export type EventType = keyof typeof payloads;
/** The list of event types, in declaration order. */
export const eventTypes = Object.keys(payloads) as EventType[];

const envelope = {
  sessionKey: z.string(),
  seq: z.number().int(),
  cursor: z.number().int(),
  at: z.number(),
  runId: z.string().optional(),
};

function eventSchema<T extends EventType>(type: T) {
  return z.object({ type: z.literal(type), ...envelope, ...payloads[type] });
}

const schemas = eventTypes.map((type) => eventSchema(type)) as unknown as [
  ReturnType<typeof eventSchema<EventType>>,
  ...ReturnType<typeof eventSchema<EventType>>[],
];

/** The zod schema of every runtime event: a discriminated union on `type`. */
export const runtimeEventSchema = z.discriminatedUnion('type', schemas);

type PayloadOf<T extends EventType> = z.infer<z.ZodObject<(typeof payloads)[T]>>;

/** One event of type `T`: the envelope (`sessionKey`, `seq`, `cursor`, `at`, `runId?`) and its payload. */
export type EventOf<T extends EventType> = {
  type: T;
  sessionKey: string;
  seq: number;
  cursor: number;
  at: number;
  runId?: string;
} & PayloadOf<T>;

/** Any runtime event. */
export type RuntimeEvent = { [T in EventType]: EventOf<T> }[EventType];

/** What a producer emits: the type, payload and optional runId; the bus stamps the rest. */
export type EventInput = {
  [T in EventType]: { type: T; runId?: string } & PayloadOf<T>;
}[EventType];

/** Parse an unknown value as a runtime event, throwing a zod error when it is not one. */
export function parseRuntimeEvent(value: unknown): RuntimeEvent {
  return runtimeEventSchema.parse(value) as RuntimeEvent;
}
