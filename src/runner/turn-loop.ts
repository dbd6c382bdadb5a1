import { composeMessageText, inlineAttachmentsOf, countBlocks } from '../policies/index.js';
import { RuntimeError, isRuntimeError, toErrorInfo, type ErrorInfo } from '../core/index.js';
import type { ModelMessage } from '../providers/index.js';
import { callWithCompaction } from './compaction.js';
import type { RunText } from './model-turn.js';
import { abortStatusOf } from './execute-run.js';
import type { PausedCall, RunContext, RunOutcome, RunPause } from './run-context.js';
import { runToolBatch, type BatchEntry } from './tool-call.js';
import { isPending, type PendingCall, type ToolResult } from './tool-call.js';

/** Admit every pending steer message as one user turn, in arrival order. Returns whether any was admitted. */
function admitSteers(context: RunContext, messages: ModelMessage[]): boolean {
  const steers = context.steering.take();
  if (steers.length === 0) return false;
  const content = steers.map((steer) => composeMessageText(steer.text, steer.parts)).join('\n\n');
  const messageIds = steers.map((steer) => steer.messageId);
  const attachments = steers.flatMap((steer) => inlineAttachmentsOf(steer.parts));
  const inline = attachments.length === 0 ? {} : { attachments };
  messages.push({ role: 'user', content, ...inline });
  context.recordTurn({ role: 'user', content, messageIds, ...inline });
  context.emit({ type: 'message.admitted', runId: context.runId, messageIds });
  return true;
}

/** The mutable state of one run of the loop. */
interface LoopState {
  readonly messages: ModelMessage[];
  readonly runText: RunText;
  readonly usage: { inputTokens: number; outputTokens: number };
  readonly compaction: { compactions: number; truncated: boolean };
  toolTurns: number;
  corrections: number;
}

function startState(context: RunContext): LoopState {
  const { resume } = context;
  if (resume !== undefined) {
    return {
      messages: [...resume.messages],
      runText: {
        text: resume.text,
        blockIndex: resume.blockIndex ?? countBlocks(resume.assistantTexts, context.services.blocks),
      },
      usage: { ...resume.usage },
      compaction: { compactions: 0, truncated: false },
      toolTurns: resume.toolTurns,
      corrections: 0,
    };
  }
  const inline = context.attachments === undefined ? {} : { attachments: context.attachments };
  context.recordTurn({ role: 'user', content: context.prompt, messageIds: context.messageIds, ...inline });
  return {
    messages: [...context.history, { role: 'user', content: context.prompt, ...inline }],
    runText: { text: '', blockIndex: 0 },
    usage: { inputTokens: 0, outputTokens: 0 },
    compaction: { compactions: 0, truncated: false },
    toolTurns: 0,
    corrections: 0,
  };
}

/** Feed a batch's results back to the model, in call order. */
function appendResults(context: RunContext, state: LoopState, results: readonly ToolResult[]): void {
  for (const result of results) {
    const isError = result.isError ? { isError: true } : {};
    const toolMessage = {
      role: 'tool' as const,
      toolCallId: result.call.id,
      tool: result.call.name,
      content: result.content,
      ...isError,
    };
    state.messages.push(toolMessage);
    context.recordTurn(toolMessage);
    if (result.correctable) state.corrections++;
  }
}

/** The pause of a batch with calls still waiting: approval first, then results from outside. */
function pauseOf(
  context: RunContext,
  state: LoopState,
  outcomes: ReadonlyArray<ToolResult | PendingCall>,
): RunPause {
  const calls: PausedCall[] = outcomes.map((outcome, position) =>
    isPending(outcome)
      ? { position, call: outcome.call, kind: outcome.needs }
      : {
          position,
          call: outcome.call,
          kind: 'ran',
          result: { content: outcome.content, isError: outcome.isError },
        },
  );
  const awaitingApproval = calls.some((call) => call.kind === 'approval' || call.kind === 'in_doubt');
  // Only the resumed batch may have been recorded before (a later batch of the run is a new tool turn).
  const recorded = state.toolTurns === context.resume?.toolTurns ? context.resume.recorded : undefined;
  return {
    ...(recorded === undefined || recorded.size === 0 ? {} : { recorded }),
    status: awaitingApproval ? 'awaiting_approval' : 'awaiting_tool_results',
    turn: state.toolTurns,
    calls,
    text: state.runText.text,
    usage: { ...state.usage },
    cost: context.failover.cost,
  };
}

/** Run a batch; undefined when every call has its result (appended), the pause otherwise. */
async function runBatch(
  context: RunContext,
  state: LoopState,
  entries: readonly BatchEntry[],
  steerable: boolean,
): Promise<RunPause | undefined> {
  context.setPhase('tools');
  const outcomes = await runToolBatch(context, entries, { steerable });
  if (outcomes.some(isPending)) return pauseOf(context, state, outcomes);
  const results = outcomes as ToolResult[];
  if (!steerable) context.settleResumed?.(results);
  appendResults(context, state, results);
  return undefined;
}

/**
 * The batch a paused run continues with: results it has, approved calls to run now; after a crash also calls that
 * never started (they run as the model asked) and calls in doubt (they wait).
 */
function resumedEntries(context: RunContext): BatchEntry[] {
  return (context.resume?.batch ?? []).map((entry): BatchEntry => {
    if ('result' in entry)
      return { call: entry.call, result: { call: entry.call, ...entry.result, correctable: false } };
    if ('inDoubt' in entry) return { call: entry.call, inDoubt: true };
    if (entry.run.fresh === true) return { call: entry.call };
    const args = entry.run.args === undefined ? {} : { args: entry.run.args };
    return { call: entry.call, options: { approved: true, ...args } };
  });
}

/**
 * The agent turn loop: assemble -> stream -> events -> tool calls -> again, until the model asks for no tools
 * (and no steer message is pending) or `maxToolTurns` is hit; then settle. A batch with calls that wait for an
 * operator or for results from outside pauses the run (the caller records the pause); a resumed run first
 * settles that batch. Never throws: every way a run can end or pause is an outcome.
 */
export async function runTurnLoop(context: RunContext): Promise<RunOutcome | RunPause> {
  const state = startState(context);
  const end = (status: RunOutcome['status'], error?: ErrorInfo): RunOutcome => ({
    status,
    text: state.runText.text,
    usage: { ...state.usage },
    cost: context.failover.cost,
    ...(error === undefined ? {} : { error }),
  });
  const overBudget = (): RunOutcome | undefined =>
    state.corrections > context.services.limits.toolCorrectionBudget
      ? end('failed', {
          code: 'tool_failed',
          message: `more than ${context.services.limits.toolCorrectionBudget} invalid tool calls`,
        })
      : undefined;
  try {
    if (context.resume !== undefined) {
      const paused = await runBatch(context, state, resumedEntries(context), false);
      if (paused !== undefined) return paused;
    }
    for (;;) {
      admitSteers(context, state.messages);
      context.setPhase('streaming');
      const turn = await callWithCompaction(context, state.messages, state.runText, state.compaction);
      state.usage.inputTokens += turn.usage.inputTokens;
      state.usage.outputTokens += turn.usage.outputTokens;
      const toolCalls = turn.toolCalls.length > 0 ? { toolCalls: turn.toolCalls } : {};
      state.messages.push({ role: 'assistant', content: turn.text, ...toolCalls });
      context.recordTurn({ role: 'assistant', content: turn.text, ...toolCalls });
      if (turn.toolCalls.length === 0) {
        // A steer that arrived while this call streamed earns one more model call; after this check the run
        // is settling and new steer messages become followups.
        if (context.steering.pending > 0) continue;
        context.setPhase('settling');
        if (turn.text.length > 0)
          context.emit({ type: 'assistant.final', runId: context.runId, text: turn.text });
        return end('completed');
      }
      if (state.toolTurns >= context.services.limits.maxToolTurns) {
        return end('failed', {
          code: 'turn_limit',
          message: `the model asked for tools more than ${context.services.limits.maxToolTurns} times`,
        });
      }
      state.toolTurns++;
      const entries = turn.toolCalls.map((call) => ({ call }));
      const paused = await runBatch(context, state, entries, true);
      if (paused !== undefined) return paused;
      const failed = overBudget();
      if (failed !== undefined) return failed;
    }
  } catch (error) {
    return endByError(context, error, end);
  }
}

/** The outcome of a loop that threw: an abort wins (cancelled tops the error ladder), then the error's code. */
function endByError(
  context: RunContext,
  error: unknown,
  end: (status: RunOutcome['status'], error?: ErrorInfo) => RunOutcome,
): RunOutcome {
  if (context.signal.aborted) {
    const status = abortStatusOf(context.signal);
    return end(status, toErrorInfo(context.signal.reason ?? new RuntimeError('cancelled', 'aborted')));
  }
  if (isRuntimeError(error, 'cancelled')) return end('aborted', toErrorInfo(error));
  return end('failed', toErrorInfo(error));
}
