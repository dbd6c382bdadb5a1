import { abortReason, type Clock } from '../core/index.js';
import { isRuntimeError, toErrorInfo, type ErrorInfo } from '../core/index.js';
import type { Random } from '../core/index.js';
import { nextToolRetryDelay, toolRetryFor, type ToolRetrySettings } from '../policies/index.js';
import type { Tool, ToolContext } from './define-tool.js';
import { invokeTool } from './invoke-tool.js';

/** What became of a tool execution, all attempts included; callers turn it into their own events. */
export type ToolOutcome =
  | { readonly ok: true; readonly output: unknown; readonly attempts: number; readonly durationMs: number }
  | { readonly ok: false; readonly error: ErrorInfo; readonly attempts: number; readonly durationMs: number };

/** How `executeTool` runs a tool: the caller's signal, clock and random, the call's identity, its defaults. */
export interface ExecuteToolOptions {
  /** Aborts the execution: a running attempt, and the wait before a retry. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /** Jitter of the retry backoff. */
  readonly random: Random;
  /** Who is calling: handed to the tool with the signal. */
  readonly call: Omit<ToolContext, 'signal'>;
  /** Time limit of one attempt when the tool sets no `timeoutMs`. @default none */
  readonly timeoutMs?: number;
  /** Retries when the tool sets no `retry` of its own. @default no retry */
  readonly retry?: ToolRetrySettings;
  /** Run the tool's `undo` with this output instead of `execute` (its result is not checked). @default execute */
  readonly undoOf?: { readonly output: unknown };
}

type Attempt =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly error: ErrorInfo; readonly final?: boolean };

/** The one error mapping of a failed attempt: a RuntimeError keeps its code (`timeout` too); else `tool_failed`. */
export function toolFailure(error: unknown): ErrorInfo {
  if (isRuntimeError(error)) return { code: error.code, message: error.message };
  return { code: 'tool_failed', message: error instanceof Error ? error.message : String(error) };
}

function missingHandler(tool: Tool, undo: boolean): ErrorInfo | undefined {
  if (undo) {
    return tool.undo === undefined
      ? { code: 'not_found', message: `no tool "${tool.name}" with undo is configured` }
      : undefined;
  }
  return tool.execute === undefined
    ? { code: 'tool_failed', message: `"${tool.name}" is a deferred tool: it has no execute` }
    : undefined;
}

async function attemptOnce(
  tool: Tool,
  args: unknown,
  options: ExecuteToolOptions,
  timeoutMs: number | undefined,
): Promise<Attempt> {
  const { signal, clock, undoOf } = options;
  try {
    const output = await invokeTool(tool, args, {
      signal,
      clock,
      context: options.call,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(undoOf === undefined ? {} : { undoOf }),
    });
    const checked = undoOf === undefined ? tool.output?.safeParse(output) : undefined;
    if (checked !== undefined && !checked.success) {
      // The same tool would return the same shape again: not worth a retry.
      const message = `"${tool.name}" returned output that does not match its schema`;
      return { ok: false, error: { code: 'tool_failed', message }, final: true };
    }
    return { ok: true, output };
  } catch (error) {
    return { ok: false, error: signal.aborted ? toErrorInfo(abortReason(signal)) : toolFailure(error) };
  }
}

/**
 * Run a resolved tool (see `resolveTool`) the one way model tool calls, plan steps and undo all share: each attempt
 * under a timeout (the tool's `timeoutMs`, else the caller's), its output checked against the tool's schema, and
 * transient failures retried with full-jitter backoff on the clock (the tool's `retry`, else the caller's). Never
 * throws: an abort, before or while running, comes back as a failure carrying the signal's reason.
 */
export async function executeTool(
  tool: Tool,
  args: unknown,
  options: ExecuteToolOptions,
): Promise<ToolOutcome> {
  const { clock, signal } = options;
  const startedAt = clock.now();
  const finish = (attempt: Attempt, attempts: number): ToolOutcome => {
    const durationMs = clock.now() - startedAt;
    return attempt.ok
      ? { ok: true, output: attempt.output, attempts, durationMs }
      : { ok: false, error: attempt.error, attempts, durationMs };
  };
  const aborted = (): Attempt => ({ ok: false, error: toErrorInfo(abortReason(signal)) });
  const missing = missingHandler(tool, options.undoOf !== undefined);
  if (missing !== undefined) return finish({ ok: false, error: missing }, 0);
  if (signal.aborted) return finish(aborted(), 0);
  const retry = toolRetryFor(tool.retry, options.retry);
  const timeoutMs = tool.timeoutMs ?? options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const result = await attemptOnce(tool, args, options, timeoutMs);
    if (result.ok || result.final === true || signal.aborted) return finish(result, attempt + 1);
    const delay = nextToolRetryDelay(attempt, result.error.code, retry, options.random);
    if (delay === undefined) return finish(result, attempt + 1);
    try {
      await clock.sleep(delay, signal);
    } catch {
      return finish(aborted(), attempt + 1);
    }
  }
}
