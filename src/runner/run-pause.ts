import type { PausedCallInfo, RunPausing } from './run-request.js';
import { approvalIdOf, type Clock, type EventInput, type PauseState } from '../core/index.js';
import type { Ledger, ToolCallRecord, ApprovalDecision, ToolCallResult } from '../ledger/index.js';
import type { ModelMessage } from '../providers/index.js';
import type { ResumedCall, RunPause, RunResume, ToolResultDraft, RunContext } from './run-context.js';
import { turnsToMessages } from './transcript.js';
import type { SessionScope } from './session-scope.js';
import type { WaitingCall } from './session-scope.js';
import { needsApproval } from '../policies/index.js';
import type { Tool } from '../tools/index.js';

/** What recording and resuming a pause needs. */
export interface PauseDeps {
  readonly ledger: Ledger;
  readonly clock: Clock;
  /** The run's session event sink. */
  readonly emit: (event: EventInput) => void;
  /** Issue a ledger write whose failure is reported in the background. */
  readonly write: (promise: Promise<void>) => void;
  /** Resolves once every event emitted so far was delivered to the subscribers (or its write failed). */
  readonly delivered: () => Promise<void>;
  readonly historyTurns: number;
}

/** What goes back to the model for a call an operator rejected. */
export function rejectionContent(message: string | undefined): string {
  return message === undefined || message.length === 0
    ? 'The operator rejected this call.'
    : `The operator rejected this call: ${message}`;
}

/** Why a call is in doubt. */
const inDoubtReason = 'the process stopped while the call ran: whether it took effect is unknown';

/** What goes back to the model for a call in doubt that an operator rejected (or nobody decided on). */
export function unknownOutcomeContent(message: string | undefined): string {
  const note = message === undefined || message.length === 0 ? '' : ` The operator says: ${message}`;
  return `Error: the outcome of this call is unknown (it was cut off by a restart and not run again).${note}`;
}

/** The result of a call the run continued without. */
const expiredApproval: ToolResultDraft = {
  content: 'Error: the approval request expired before an operator answered.',
  isError: true,
};
const missingResult: ToolResultDraft = {
  content: 'Error: no result was supplied for this call.',
  isError: true,
};

/**
 * A run's pause, to be recorded where the session machine adopts it (`RunPausing`): what the machine adopts (why,
 * the calls it waits for), and `record`, which writes every call of the batch (results of those that ran, so they
 * never run twice), the run's status and progress, one `approval.requested` or `tool.deferred` per waiting call,
 * then `run.paused`. One synchronous stretch, so it commits as one.
 */
export function pausingOf(deps: PauseDeps, sessionKey: string, runId: string, pause: RunPause): RunPausing {
  const at = deps.clock.now();
  const waiting: PausedCallInfo[] = [];
  for (const entry of pause.calls) {
    if (entry.kind === 'ran') continue;
    const { id: toolCallId, name: tool } = entry.call;
    const inDoubt = entry.kind === 'in_doubt';
    const needs = entry.kind === 'deferred' ? 'deferred' : 'approval';
    const position = entry.position;
    const approvalId = approvalIdOf(toolCallId, inDoubt ? at : undefined);
    const doubt = inDoubt ? { inDoubt } : {};
    waiting.push({ toolCallId, approvalId, tool, needs, ...doubt, turn: pause.turn, position });
  }
  return {
    paused: { runId, state: pause.status, calls: waiting, at },
    record: () => recordPause(deps, { sessionKey, runId, at }, pause),
  };
}

/** Write a pause and emit its events (see `pausingOf`); resolves once the events were delivered. */
function recordPause(
  deps: PauseDeps,
  where: { readonly sessionKey: string; readonly runId: string; readonly at: number },
  pause: RunPause,
): Promise<void> {
  const { sessionKey, runId, at } = where;
  const records: ToolCallRecord[] = pause.calls.map((entry) => ({
    sessionKey,
    runId,
    turn: pause.turn,
    position: entry.position,
    toolCallId: entry.call.id,
    tool: entry.call.name,
    args: entry.call.args,
    kind: entry.kind,
    status: entry.kind === 'ran' ? 'settled' : 'pending',
    ...(entry.result === undefined ? {} : { result: entry.result }),
    requestedAt: at,
  }));
  const recorded = pause.recorded ?? new Set<number>();
  const fresh = records.filter((record) => !recorded.has(record.position));
  if (fresh.length > 0) deps.write(deps.ledger.putToolCalls(fresh));
  // Calls an earlier pause of this batch recorded (a crash while an approved one ran) wait again as they are; one
  // in doubt now is a new request (its kind and time recorded, so a restart restores it with its approval id).
  for (const record of records.filter((entry) => recorded.has(entry.position))) {
    const key = { runId, turn: record.turn, position: record.position };
    const result = record.result === undefined ? {} : { result: record.result };
    const doubt = record.kind === 'in_doubt' ? { kind: record.kind, requestedAt: at } : {};
    deps.write(deps.ledger.updateToolCall(key, { status: record.status, ...result, ...doubt }));
  }
  deps.write(
    deps.ledger.setRunStatus(runId, pause.status, { text: pause.text, usage: pause.usage, cost: pause.cost }),
  );
  const waiting: string[] = [];
  for (const entry of pause.calls) {
    if (entry.kind === 'ran') continue;
    const { id: toolCallId, name: tool, args } = entry.call;
    const approvalId = approvalIdOf(toolCallId, entry.kind === 'in_doubt' ? at : undefined);
    if (entry.kind === 'in_doubt')
      deps.emit({ type: 'tool.in_doubt', runId, toolCallId, tool, args, reason: inDoubtReason, approvalId });
    if (entry.kind === 'deferred') deps.emit({ type: 'tool.deferred', runId, toolCallId, tool, args });
    else deps.emit({ type: 'approval.requested', runId, toolCallId, tool, args, approvalId });
    waiting.push(toolCallId);
  }
  deps.emit({ type: 'run.paused', runId, state: pause.status, toolCallIds: waiting });
  return deps.delivered();
}

/** The batch that paused the run: the calls of its latest tool turn, by position. */
export async function pausedBatch(ledger: Ledger, runId: string): Promise<ToolCallRecord[]> {
  const calls = await ledger.listToolCalls(runId);
  const turn = Math.max(0, ...calls.map((call) => call.turn));
  return calls.filter((call) => call.turn === turn);
}

/** How one recorded call continues: its result, or (approved) run it now. Calls still waiting get an error. */
function resumedCall(deps: PauseDeps, record: ToolCallRecord): ResumedCall {
  const call = { id: record.toolCallId, name: record.tool, args: record.args };
  if (record.status === 'approved') {
    const edited = record.decision?.decision === 'edit' ? { args: record.decision.args } : {};
    return { call, run: edited };
  }
  const inDoubt = record.kind === 'in_doubt';
  if (record.status === 'rejected') {
    const message = record.decision?.message;
    const content = inDoubt ? unknownOutcomeContent(message) : rejectionContent(message);
    return { call, result: { content, isError: true } };
  }
  if (record.result !== undefined) return { call, result: record.result };
  const base = { runId: record.runId, toolCallId: record.toolCallId, tool: record.tool };
  if (inDoubt) {
    deps.emit({ type: 'approval.resolved', ...base, decision: 'expired' });
    return { call, result: { content: unknownOutcomeContent(undefined), isError: true } };
  }
  if (record.kind === 'approval') {
    deps.emit({ type: 'approval.resolved', ...base, decision: 'expired' });
    return { call, result: expiredApproval };
  }
  deps.emit({
    type: 'tool.failed',
    ...base,
    error: { code: 'tool_failed', message: 'no result was supplied for this deferred call' },
  });
  return { call, result: missingResult };
}

/** Rebuild where a paused run stood: the conversation (history, the run's turns) and its settled batch. */
export async function loadResume(
  deps: PauseDeps,
  sessionKey: string,
  runId: string,
): Promise<{ resume: RunResume; from: PauseState; batch: ToolCallRecord[]; turns: number }> {
  const { ledger, historyTurns } = deps;
  const record = await ledger.getRun(runId);
  const runTurns = await ledger.listRunTurns(runId);
  const batch = await pausedBatch(ledger, runId);
  const earlier =
    historyTurns === 0 ? [] : await ledger.listTurns(sessionKey, { last: historyTurns + runTurns.length });
  const history = turnsToMessages(
    earlier.filter((turn) => turn.runId !== runId),
    historyTurns,
  );
  const pending = new Set(batch.map((call) => call.toolCallId));
  const own: ModelMessage[] = turnsToMessages(runTurns, runTurns.length, pending);
  const toolTurns = runTurns.filter((turn) => (turn.toolCalls?.length ?? 0) > 0).length;
  const from: PauseState = record?.status === 'awaiting_tool_results' ? record.status : 'awaiting_approval';
  return {
    from,
    batch,
    turns: runTurns.length,
    resume: {
      messages: [...history, ...own],
      toolTurns,
      assistantTexts: runTurns.filter((turn) => turn.role === 'assistant').map((turn) => turn.content),
      text: record?.text ?? '',
      usage: record?.usage ?? { inputTokens: 0, outputTokens: 0 },
      cost: record?.cost ?? 0,
      batch: batch.map((call) => resumedCall(deps, call)),
    },
  };
}

/** A resumed batch's results went back to the model: its waiting calls are settled with them. */
export function settleBatch(
  deps: PauseDeps,
  batch: readonly ToolCallRecord[],
  results: readonly ToolResultDraft[],
): void {
  batch.forEach((record, index) => {
    const result = results[index];
    if (record.kind === 'ran' || result === undefined) return;
    const key = { runId: record.runId, turn: record.turn, position: record.position };
    deps.write(
      deps.ledger.updateToolCall(key, {
        status: 'settled',
        result: { content: result.content, isError: result.isError },
        resolvedAt: record.resolvedAt ?? deps.clock.now(),
      }),
    );
  });
}

/** A paused run ends without resuming: its waiting calls are cancelled (approvals say so in an event). */
export async function cancelPause(deps: PauseDeps, runId: string): Promise<void> {
  const batch = await pausedBatch(deps.ledger, runId);
  const now = deps.clock.now();
  for (const record of batch) {
    if (record.kind === 'ran' || record.status === 'settled') continue;
    const key = { runId, turn: record.turn, position: record.position };
    deps.write(deps.ledger.updateToolCall(key, { status: 'cancelled', resolvedAt: now }));
    if ((record.kind === 'approval' || record.kind === 'in_doubt') && record.status === 'pending') {
      deps.emit({
        type: 'approval.resolved',
        runId,
        toolCallId: record.toolCallId,
        tool: record.tool,
        decision: 'cancelled',
      });
    }
  }
}

/**
 * Answer a call waiting for approval with an operator's decision in the session machine (it resumes the run
 * when nothing waits), then record and announce it. When the last approval was answered while deferred calls still wait, the run now waits for their results.
 */
export async function answerApproval(
  scope: SessionScope,
  call: WaitingCall,
  decision: ApprovalDecision,
): Promise<void> {
  const { ledger, clock } = scope.services;
  const { runId, turn, position } = call;
  // The session machine answers the call first: an answer it refuses changes nothing, recorded or announced.
  const after = scope.control.answerCall(call, 'approval');
  const written = ledger.updateToolCall(
    { runId, turn, position },
    {
      status: decision.decision === 'reject' ? 'rejected' : 'approved',
      decision,
      resolvedAt: clock.now(),
    },
  );
  scope.control.emit({
    type: 'approval.resolved',
    runId,
    toolCallId: call.toolCallId,
    tool: call.tool,
    decision: decision.decision,
    ...(decision.remember === undefined ? {} : { remember: decision.remember }),
    ...(decision.message === undefined ? {} : { message: decision.message }),
  });
  const moved = after.state === 'awaiting_tool_results';
  await Promise.all([written, ...(moved ? [ledger.setRunStatus(runId, 'awaiting_tool_results')] : [])]);
}

/** Answer a deferred call with its supplied result in the session machine, then record and announce it. */
export async function answerSupplied(
  scope: SessionScope,
  call: WaitingCall,
  result: ToolCallResult,
): Promise<void> {
  const { ledger, clock } = scope.services;
  const { runId, turn, position } = call;
  scope.control.answerCall(call, 'deferred');
  const written = ledger.updateToolCall(
    { runId, turn, position },
    { status: 'supplied', result, resolvedAt: clock.now() },
  );
  scope.control.emit({
    type: 'tool.supplied',
    runId,
    toolCallId: call.toolCallId,
    tool: call.tool,
    isError: result.isError,
  });
  await written;
}

const nothingRemembered = { run: [], session: [] } as const;

/**
 * Whether a run's call of `tool` must wait for an operator: the pure rule (`risk: 'high'` or listed in
 * `alwaysApprove`, unless remembered), reading remembered approvals from the ledger only for calls that would
 * need one.
 */
export async function toolNeedsApproval(context: RunContext, tool: Tool): Promise<boolean> {
  const { ledger, alwaysApprove } = context.services;
  const input = { tool: tool.name, risk: tool.risk, alwaysApprove };
  if (!needsApproval({ ...input, remembered: nothingRemembered })) return false;
  const remembered = await ledger.rememberedTools(context.sessionKey, context.runId);
  return needsApproval({ ...input, remembered });
}
