import type { RuntimeEvent } from '../../src/core/events.js';
import type {
  CompensationRecord,
  InboxRecord,
  Ledger,
  PlanRecord,
  RunRecord,
  SessionRecord,
  StepResultRecord,
  ToolCallRecord,
  TurnRecord,
} from '../../src/ledger/index.js';

/** How an area's tests reach the ledger the contract made for the current test. */
export type CurrentLedger = () => Ledger;

/**
 * How a store's suite reaches the store under test (the current test's ledger, seen as that store and the few
 * methods of other stores its tests set up or check with).
 */
export type Current<Store> = () => Store;

export function session(sessionKey: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    sessionKey,
    override: { mode: 'collect', debounceMs: 1000 },
    snapshot: {
      value: 'idle',
      context: { queue: [{ messageId: 'm1', deadline: 5000 }], flags: [true, null] },
    },
    epoch: 1,
    lastSeq: 7,
    updatedAt: 1000,
    ...extra,
  };
}

export function message(sessionKey: string, messageId: string, order: number): InboxRecord {
  return {
    sessionKey,
    messageId,
    order,
    text: `text ${messageId}`,
    mode: 'collect',
    status: 'pending',
    acceptedAt: 100 + order,
  };
}

export function run(sessionKey: string, runId: string, startedAt = 100): RunRecord {
  return {
    runId,
    sessionKey,
    status: 'running',
    messageIds: ['m1', 'm2'],
    provider: 'scripted',
    model: 'test-model',
    startedAt,
    usage: { inputTokens: 0, outputTokens: 0 },
    text: '',
  };
}

export function turn(
  sessionKey: string,
  runId: string,
  index: number,
  extra: Partial<TurnRecord> = {},
): TurnRecord {
  return { sessionKey, runId, index, role: 'assistant', content: `turn ${index}`, at: 200 + index, ...extra };
}

/** A call of a paused batch, waiting for approval, with nested args (id and args name its key). */
export function toolCall(
  sessionKey: string,
  runId: string,
  turn: number,
  position: number,
  extra: Partial<ToolCallRecord> = {},
): ToolCallRecord {
  return {
    sessionKey,
    runId,
    turn,
    position,
    toolCallId: `call-${turn}-${position}`,
    tool: 'search',
    args: { q: `query ${turn}.${position}`, nested: [1, { deep: true }], none: null },
    kind: 'approval',
    status: 'pending',
    requestedAt: 300 + 10 * turn + position,
    ...extra,
  };
}

/** A pending compensation of `runId`, with args and a nested result. */
export function compensation(
  sessionKey: string,
  runId: string,
  seq: number,
  extra: Partial<CompensationRecord> = {},
): CompensationRecord {
  return {
    sessionKey,
    runId,
    seq,
    toolCallId: `call-${seq}`,
    tool: 'book',
    args: { room: `room ${seq}`, nights: [1, 2] },
    result: { bookingId: `b${seq}`, total: { amount: 120, currency: 'EUR' } },
    status: 'pending',
    recordedAt: 400 + seq,
    ...extra,
  };
}

/** The plan of `runId`, with a nested definition and options, nothing approved yet. */
export function plan(sessionKey: string, runId: string, extra: Partial<PlanRecord> = {}): PlanRecord {
  return {
    runId,
    sessionKey,
    plan: {
      steps: [
        { id: 'fetch', tool: 'search', args: { q: `query ${runId}` } },
        { id: 'send', tool: 'mail', dependsOn: ['fetch'], approval: true },
      ],
    },
    options: { maxConcurrency: 2, failFast: true, tags: ['nightly', null] },
    approvedSteps: [],
    createdAt: 500,
    ...extra,
  };
}

/** A step of `runId` that succeeded, with nested data (its step id and seq in it). */
export function stepResult(
  runId: string,
  stepId: string,
  seq: number,
  extra: Partial<StepResultRecord> = {},
): StepResultRecord {
  return {
    runId,
    stepId,
    seq,
    success: true,
    data: { items: [stepId, seq], nested: { ok: true, none: null } },
    metadata: { executionTime: 10 * seq, retries: 0, startedAt: 600 + seq },
    recordedAt: 700 + seq,
    ...extra,
  };
}

/**
 * A non-delta event, recorded at `at` (default 1000 + cursor). Tests that check exact events, counts or
 * cursors use these: an implementation may store consecutive `assistant.delta` events of a run coalesced.
 */
export function event(cursor: number, sessionKey: string, seq: number, at = 1000 + cursor): RuntimeEvent {
  return { type: 'message.queued', sessionKey, seq, cursor, at, messageId: `m${cursor}`, position: seq };
}

/** An `assistant.delta` event of `runId`; read back, only its text (concatenated per run) is pinned. */
export function delta(
  cursor: number,
  sessionKey: string,
  seq: number,
  runId: string,
  text: string,
): RuntimeEvent {
  return { type: 'assistant.delta', sessionKey, seq, cursor, at: 1000 + cursor, runId, delta: text };
}

/** The events that are not `assistant.delta` or `assistant.reasoning` (those may be stored coalesced). */
export function withoutDeltas(events: readonly RuntimeEvent[]): RuntimeEvent[] {
  return events.filter((item) => item.type !== 'assistant.delta' && item.type !== 'assistant.reasoning');
}

/** The concatenated `assistant.delta` text of `runId` among `events`. */
export function deltaText(events: readonly RuntimeEvent[], runId: string): string {
  let text = '';
  for (const item of events) if (item.type === 'assistant.delta' && item.runId === runId) text += item.delta;
  return text;
}

/** What a promise rejected with (undefined when it resolved). */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}
