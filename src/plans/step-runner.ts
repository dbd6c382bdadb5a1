import { abortReason, type Clock } from '../core/clock.js';
import { RuntimeError, isRuntimeError, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { EventInput } from '../core/events.js';
import type { Random } from '../core/ids.js';
import { backoffDelay } from '../policies/backoff.js';
import type { Tool } from '../tools/define-tool.js';
import { describeInvalidArgs } from '../tools/describe-invalid-args.js';
import { invokeTool } from '../tools/invoke-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { inputTable } from './input-table.js';
import type { PlanOptions } from './plan-schema.js';
import type { StepResult } from './step-result.js';

/** What running one step needs from the plan run. */
export interface StepRunContext {
  readonly runId: string;
  readonly sessionKey: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly tools: ToolRegistry;
  readonly options: PlanOptions;
  /** Aborts on a user abort and, with `failFast`, on the first failure. */
  readonly signal: AbortSignal;
  emit(event: EventInput): void;
  /** Record the compensation of a step whose tool has `undo`. */
  compensate(entry: { toolCallId: string; tool: string; args: unknown; output: unknown }): void;
}

/** A unit of work: a plan step, or one child of an expanded step, with its args resolved. */
export interface StepUnit {
  readonly id: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** Errors not worth retrying: the call itself is wrong, or the run is stopping. */
const permanent = new Set(['args_invalid', 'args_unresolved', 'tool_denied', 'invalid_input', 'cancelled']);

/** The result of a step that failed before or while running, with its events. */
export function failStep(
  context: StepRunContext,
  unit: Pick<StepUnit, 'id' | 'tool'>,
  error: ErrorInfo,
  metadata: StepResult['metadata'],
): StepResult {
  const { runId } = context;
  context.emit({ type: 'tool.failed', runId, toolCallId: unit.id, tool: unit.tool, error, stepId: unit.id });
  context.emit({
    type: 'step.executed',
    runId,
    stepId: unit.id,
    tool: unit.tool,
    success: false,
    executionTime: metadata.executionTime,
    retries: metadata.retries,
    error,
  });
  return { stepId: unit.id, success: false, error, metadata };
}

/** The tool a unit calls, validated args included; an error result when it cannot be called. */
function prepare(context: StepRunContext, unit: StepUnit): { tool: Tool; args: unknown } | ErrorInfo {
  if (context.tools.isDenied(unit.tool)) {
    return { code: 'tool_denied', message: `the tool "${unit.tool}" is not allowed here` };
  }
  const tool = context.tools.get(unit.tool);
  if (tool === undefined) return { code: 'not_found', message: `unknown tool "${unit.tool}"` };
  if (tool.execute === undefined) {
    return {
      code: 'tool_failed',
      message: `"${unit.tool}" is a deferred tool; plans can only run tools with execute`,
    };
  }
  const parsed = tool.input.safeParse(unit.args);
  if (!parsed.success) return { code: 'args_invalid', message: describeInvalidArgs(unit.tool, parsed.error) };
  return { tool, args: parsed.data };
}

/**
 * Run one unit: validate its args against the tool's schema, show them (an `assistant.delta` markdown table),
 * call the tool under the step timeout, and retry transient failures with exponential backoff and full jitter.
 * Never throws: an abort comes back as a `cancelled` result.
 */
export async function runStep(context: StepRunContext, unit: StepUnit): Promise<StepResult> {
  const { runId, clock, options, signal } = context;
  const startedAt = clock.now();
  const metadata = (retries: number) => ({ executionTime: clock.now() - startedAt, retries, startedAt });
  const prepared = prepare(context, unit);
  if ('code' in prepared) return failStep(context, unit, prepared, metadata(0));
  const { tool, args } = prepared;
  context.emit({ type: 'assistant.delta', runId, delta: inputTable(unit.id, unit.tool, unit.args) });
  context.emit({ type: 'tool.called', runId, toolCallId: unit.id, tool: unit.tool, args, stepId: unit.id });
  for (let attempt = 0; ; attempt++) {
    try {
      const output = await invokeTool(tool, args, {
        signal,
        clock,
        timeoutMs: tool.timeoutMs ?? options.timeoutMs,
        context: { toolCallId: unit.id, sessionKey: context.sessionKey, runId },
      });
      const checked = tool.output?.safeParse(output);
      if (checked !== undefined && !checked.success) {
        const error = {
          code: 'tool_failed',
          message: `"${unit.tool}" returned output that does not match its schema`,
        } as const;
        return failStep(context, unit, error, metadata(attempt));
      }
      return succeed(context, unit, tool, args, output, metadata(attempt));
    } catch (error) {
      if (signal.aborted) return failStep(context, unit, toErrorInfo(abortReason(signal)), metadata(attempt));
      const info = toErrorInfo(error);
      if (attempt < options.retries && !permanent.has(info.code)) {
        try {
          await clock.sleep(backoffDelay(attempt, context.random, { baseMs: options.retryBaseMs }), signal);
        } catch {
          return failStep(context, unit, toErrorInfo(abortReason(signal)), metadata(attempt));
        }
        continue;
      }
      const code = info.code === 'timeout' || isRuntimeError(error) ? info.code : 'tool_failed';
      return failStep(context, unit, { code, message: info.message }, metadata(attempt));
    }
  }
}

function succeed(
  context: StepRunContext,
  unit: StepUnit,
  tool: Tool,
  args: unknown,
  output: unknown,
  metadata: StepResult['metadata'],
): StepResult {
  const { runId } = context;
  context.emit({
    type: 'tool.succeeded',
    runId,
    toolCallId: unit.id,
    tool: unit.tool,
    output,
    durationMs: metadata.executionTime,
    stepId: unit.id,
  });
  context.emit({
    type: 'step.executed',
    runId,
    stepId: unit.id,
    tool: unit.tool,
    success: true,
    executionTime: metadata.executionTime,
    retries: metadata.retries,
  });
  if (tool.undo !== undefined) context.compensate({ toolCallId: unit.id, tool: unit.tool, args, output });
  return { stepId: unit.id, success: true, data: output, metadata };
}

/** A `cancelled` error for a step that never ran. */
export function cancelledError(message: string): ErrorInfo {
  return toErrorInfo(new RuntimeError('cancelled', message));
}
