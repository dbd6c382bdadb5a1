import { RuntimeError, isRuntimeError, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { ModelMessage } from '../providers/model-provider.js';
import { callWithCompaction } from './compacting-call.js';
import type { RunText } from './model-turn.js';
import { abortStatusOf } from './run-abort.js';
import type { RunContext, RunOutcome } from './run-context.js';
import { runToolBatch } from './tool-batch.js';

/** Admit every pending steer message as one user turn, in arrival order. Returns whether any was admitted. */
function admitSteers(context: RunContext, messages: ModelMessage[]): boolean {
  const steers = context.steering.take();
  if (steers.length === 0) return false;
  const content = steers.map((steer) => steer.text).join('\n\n');
  const messageIds = steers.map((steer) => steer.messageId);
  messages.push({ role: 'user', content });
  context.recordTurn({ role: 'user', content, messageIds });
  context.emit({ type: 'message.admitted', runId: context.runId, messageIds });
  return true;
}

/**
 * The agent turn loop: assemble -> stream -> events -> tool calls -> again, until the model asks for no tools
 * (and no steer message is pending) or `maxToolTurns` is hit; then settle. Never throws: every way a run can
 * end is an outcome.
 */
export async function runTurnLoop(context: RunContext): Promise<RunOutcome> {
  const runText: RunText = { text: '', blockIndex: 0 };
  const usage = { inputTokens: 0, outputTokens: 0 };
  const end = (status: RunOutcome['status'], error?: ErrorInfo): RunOutcome => ({
    status,
    text: runText.text,
    usage: { ...usage },
    cost: context.failover.cost,
    ...(error === undefined ? {} : { error }),
  });
  const messages: ModelMessage[] = [...context.history, { role: 'user', content: context.prompt }];
  context.recordTurn({ role: 'user', content: context.prompt, messageIds: context.messageIds });
  let toolTurns = 0;
  let corrections = 0;
  const compaction = { compactions: 0, truncated: false };
  try {
    for (;;) {
      admitSteers(context, messages);
      context.setPhase('streaming');
      const turn = await callWithCompaction(context, messages, runText, compaction);
      usage.inputTokens += turn.usage.inputTokens;
      usage.outputTokens += turn.usage.outputTokens;
      const toolCalls = turn.toolCalls.length > 0 ? { toolCalls: turn.toolCalls } : {};
      messages.push({ role: 'assistant', content: turn.text, ...toolCalls });
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
      if (toolTurns >= context.limits.maxToolTurns) {
        return end('failed', {
          code: 'turn_limit',
          message: `the model asked for tools more than ${context.limits.maxToolTurns} times`,
        });
      }
      toolTurns++;
      context.setPhase('tools');
      const results = await runToolBatch(context, turn.toolCalls);
      for (const result of results) {
        const isError = result.isError ? { isError: true } : {};
        const toolMessage = {
          role: 'tool' as const,
          toolCallId: result.call.id,
          tool: result.call.name,
          content: result.content,
          ...isError,
        };
        messages.push(toolMessage);
        context.recordTurn(toolMessage);
        if (result.correctable) corrections++;
      }
      if (corrections > context.limits.toolCorrectionBudget) {
        return end('failed', {
          code: 'tool_failed',
          message: `more than ${context.limits.toolCorrectionBudget} invalid tool calls`,
        });
      }
    }
  } catch (error) {
    if (context.signal.aborted) {
      const status = abortStatusOf(context.signal);
      return end(status, toErrorInfo(context.signal.reason ?? new RuntimeError('cancelled', 'aborted')));
    }
    if (isRuntimeError(error, 'cancelled')) return end('aborted', toErrorInfo(error));
    return end('failed', toErrorInfo(error));
  }
}
