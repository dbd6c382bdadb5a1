import { abortReason } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';
import type { ToolCall } from '../providers/model-provider.js';
import type { Tool } from '../tools/define-tool.js';
import type { RunContext } from './run-context.js';

/** Resolve when `promise` settles, or reject as soon as `signal` aborts (a tool that ignores it cannot hold the run). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * One attempt at a tool call: `execute` with the run's signal joined to the tool's own timeout. Resolves with the
 * output; rejects with what it threw, a `timeout` RuntimeError, or the run's abort reason.
 */
export async function attemptTool(
  context: RunContext,
  tool: Tool,
  call: ToolCall,
  args: unknown,
): Promise<unknown> {
  const { signal } = context;
  const controller = new AbortController();
  const onRunAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onRunAbort, { once: true });
  const timer =
    tool.timeoutMs === undefined
      ? undefined
      : context.clock.setTimeout(
          () =>
            controller.abort(
              new RuntimeError('timeout', `"${call.name}" timed out after ${tool.timeoutMs} ms`),
            ),
          tool.timeoutMs,
        );
  try {
    return await untilAborted(
      Promise.resolve().then(() =>
        tool.execute?.(args, {
          signal: controller.signal,
          toolCallId: call.id,
          sessionKey: context.sessionKey,
          runId: context.runId,
        }),
      ),
      controller.signal,
    );
  } finally {
    signal.removeEventListener('abort', onRunAbort);
    if (timer !== undefined) context.clock.clearTimeout(timer);
  }
}
