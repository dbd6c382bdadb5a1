import type { Clock } from '../core/index.js';
import { abortReason } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { Tool, ToolContext } from './define-tool.js';

/**
 * Resolve when `promise` settles, or reject as soon as `signal` aborts (a tool that ignores it cannot hold the run).
 * The tool's own settling is always observed, so one that rejects after the abort is not an unhandled rejection.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
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

/** How one attempt at a tool runs: the caller's signal, the clock for the timeout, and the call's identity. */
export interface InvokeOptions {
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /** @default the tool's own `timeoutMs`; none when neither is set */
  readonly timeoutMs?: number;
  readonly context: Omit<ToolContext, 'signal'>;
  /** Run the tool's `undo` with this output instead of `execute`. */
  readonly undoOf?: { readonly output: unknown };
}

/**
 * One attempt at a tool: `execute` (or `undo`) with the caller's signal joined to a timeout. Resolves with the
 * output; rejects with what it threw, a `timeout` RuntimeError, or the caller's abort reason.
 */
export async function invokeTool(tool: Tool, args: unknown, options: InvokeOptions): Promise<unknown> {
  const { signal, clock } = options;
  const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const what = options.undoOf === undefined ? `"${tool.name}"` : `undo of "${tool.name}"`;
  const timer =
    timeoutMs === undefined
      ? undefined
      : clock.setTimeout(
          () => controller.abort(new RuntimeError('timeout', `${what} timed out after ${timeoutMs} ms`)),
          timeoutMs,
        );
  const context: ToolContext = { ...options.context, signal: controller.signal };
  try {
    // Aborted before the tool started (while the call waited for the ledger or a lane): it never runs.
    if (controller.signal.aborted) throw abortReason(controller.signal);
    return await untilAborted(
      Promise.resolve().then(() =>
        options.undoOf === undefined
          ? tool.execute?.(args, context)
          : tool.undo?.(args, options.undoOf.output, context),
      ),
      controller.signal,
    );
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}
