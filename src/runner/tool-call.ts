import { abortReason, RuntimeError, type ErrorCode, storableText, toErrorInfo } from '../core/index.js';
import type { ToolCall } from '../providers/index.js';
import { type Tool, executeTool, resolveTool } from '../tools/index.js';
import { runFailureCode } from '../policies/index.js';
import { toolNeedsApproval } from './run-pause.js';
import type { RunContext } from './run-context.js';

/** The result of one tool call as it goes back to the model. */
export interface ToolResult {
  readonly call: ToolCall;
  readonly content: string;
  readonly isError: boolean;
  /** True when the model could correct the call (unknown tool, invalid arguments): counts against the budget. */
  readonly correctable: boolean;
}

/**
 * A call that cannot run yet: it waits for an operator's approval, or (no `execute`) for a supplied result, or
 * (`in_doubt`, after a crash) for an operator to say what became of it.
 */
export interface PendingCall {
  readonly call: ToolCall;
  readonly needs: 'approval' | 'deferred' | 'in_doubt';
}

/** How `executeToolCall` runs a call. */
export interface ToolCallOptions {
  /** An operator approved the call: it runs without asking again. */
  readonly approved?: boolean;
  /** The arguments an operator put in place of the model's (`edit`); validated like the model's. */
  readonly args?: unknown;
}

/** True for a call that waits instead of having a result. */
export function isPending(outcome: ToolResult | PendingCall): outcome is PendingCall {
  return 'needs' in outcome;
}

/** The synthetic result of a call that was not launched because a steer message arrived. */
export const skippedToolContent = 'Skipped due to queued user message.';

function errorResult(
  context: RunContext,
  call: ToolCall,
  code: ErrorCode,
  message: string,
  correctable = false,
) {
  context.emit({
    type: 'tool.failed',
    runId: context.runId,
    toolCallId: call.id,
    tool: call.name,
    error: { code, message },
  });
  return { call, content: `Error: ${storableText(message)}`, isError: true, correctable };
}

/** A tool's output as the model reads it and its turn records it (a U+0000 in a text output becomes U+FFFD). */
export function serialize(output: unknown): string {
  if (typeof output === 'string') return storableText(output);
  return JSON.stringify(output) ?? 'null';
}

/**
 * Validate and run one tool call through the one tool executor (policy check, timeout, retry rule, output
 * schema). Model mistakes (unknown tool, invalid args) and tool failures come back as error results for the
 * model; an abort of the run and a denied tool throw. A call that needs approval (and was not approved) or has no
 * executor comes back pending, without running.
 */
export async function executeToolCall(
  context: RunContext,
  call: ToolCall,
  options: ToolCallOptions = {},
): Promise<ToolResult | PendingCall> {
  const { runId } = context;
  const args = options.args ?? call.args;
  const called = (): void =>
    context.emit({ type: 'tool.called', runId, toolCallId: call.id, tool: call.name, args });
  const resolved = resolveTool(context.tools, call.name, args);
  if (!resolved.ok) {
    called();
    const { code, message } = resolved.error;
    // Not a correctable mistake: asking again for a denied tool would only burn the correction budget.
    if (code !== 'tool_denied') return errorResult(context, call, code, message, true);
    errorResult(context, call, code, message);
    throw new RuntimeError('tool_denied', `the model called "${call.name}", which the tool policy denies`);
  }
  const { tool } = resolved;
  // A deferred tool never asks for approval: whoever supplies its result decides what it does.
  if (tool.execute === undefined) return { call, needs: 'deferred' };
  if (options.approved !== true && (await toolNeedsApproval(context, tool))) {
    return { call, needs: 'approval' };
  }
  called();
  // At most once: its start is recorded before it can take effect, so a crash from here on leaves it in doubt
  // (never run again on its own) instead of looking as if it never started. An idempotent tool needs no wait.
  if (tool.idempotent !== true) await context.durable?.();
  return runToolCall(context, tool, call, resolved.args);
}

async function runToolCall(
  context: RunContext,
  tool: Tool,
  call: ToolCall,
  args: unknown,
): Promise<ToolResult> {
  const { runId, signal } = context;
  const outcome = await executeTool(tool, args, {
    signal,
    clock: context.services.clock,
    random: context.services.random,
    call: { toolCallId: call.id, sessionKey: context.sessionKey, runId },
  });
  if (!outcome.ok) {
    if (signal.aborted) throw abortReason(signal);
    return errorResult(context, call, outcome.error.code, outcome.error.message);
  }
  const { durationMs } = outcome;
  const content = serialize(outcome.output);
  // A text output is the content the turn records (storable), so tool.succeeded says what the model reads.
  const output = typeof outcome.output === 'string' ? content : outcome.output;
  context.emit({ type: 'tool.succeeded', runId, toolCallId: call.id, tool: call.name, output, durationMs });
  if (tool.undo !== undefined) context.compensate({ toolCallId: call.id, tool: call.name, args, output });
  return { call, content, isError: false, correctable: false };
}

/** Record a call that never launched because steering took over: a synthetic result and `tool.skipped`. */
export function skipToolCall(context: RunContext, call: ToolCall): ToolResult {
  context.emit({
    type: 'tool.skipped',
    runId: context.runId,
    toolCallId: call.id,
    tool: call.name,
    reason: 'steered',
  });
  return { call, content: skippedToolContent, isError: false, correctable: false };
}

/** One call of a batch and how to run it (an approved call runs without asking again). */
export interface BatchEntry {
  readonly call: ToolCall;
  readonly options?: ToolCallOptions;
  /** A call that already has its result: nothing runs. */
  readonly result?: ToolResult;
  /** A call in doubt after a crash: it does not run, it waits for an operator. */
  readonly inDoubt?: boolean;
}

/**
 * Run the tool calls of one model turn, at most `parallelToolCalls` at once, outcomes in call order: a result,
 * or a pending call (approval, deferred). Steering is checked before each launch: once a steer message is
 * pending, calls not yet launched are skipped; calls already running always finish. When calls fail the run
 * (an abort, a denied tool), every launched call still settles first and the error the run reports is the one
 * highest on the error ladder.
 */
export async function runToolBatch(
  context: RunContext,
  entries: readonly BatchEntry[],
  options: { readonly steerable: boolean } = { steerable: true },
): Promise<Array<ToolResult | PendingCall>> {
  const outcomes = new Array<ToolResult | PendingCall>(entries.length);
  const failures: unknown[] = [];
  let next = 0;
  let skipping = false;
  const worker = async (): Promise<void> => {
    while (next < entries.length && failures.length === 0) {
      const index = next++;
      const entry = entries[index] as BatchEntry;
      if (entry.result !== undefined) {
        outcomes[index] = entry.result;
        continue;
      }
      if (entry.inDoubt === true) {
        outcomes[index] = { call: entry.call, needs: 'in_doubt' };
        continue;
      }
      if (context.signal.aborted) return;
      if (options.steerable && (skipping || context.steering.pending > 0)) {
        skipping = true;
        outcomes[index] = skipToolCall(context, entry.call);
        continue;
      }
      try {
        outcomes[index] = await executeToolCall(context, entry.call, entry.options);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  const workers = Math.max(1, Math.min(context.services.limits.parallelToolCalls, entries.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (context.signal.aborted) throw abortReason(context.signal);
  if (failures.length > 0) {
    const code = runFailureCode(failures.map((failure) => toErrorInfo(failure).code));
    throw failures.find((failure) => toErrorInfo(failure).code === code) ?? failures[0];
  }
  return outcomes;
}
