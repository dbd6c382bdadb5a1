import { abortReason } from '../core/clock.js';
import type { ToolCall } from '../providers/model-provider.js';
import type { RunContext } from './run-context.js';
import { executeToolCall, skipToolCall, type ToolResult } from './tool-call.js';

/**
 * Run the tool calls of one model turn, at most `parallelToolCalls` at once, results in call order.
 * Steering is checked before each launch: once a steer message is pending, calls not yet launched are
 * skipped; calls already running always finish.
 */
export async function runToolBatch(context: RunContext, calls: readonly ToolCall[]): Promise<ToolResult[]> {
  const results: ToolResult[] = new Array<ToolResult>(calls.length);
  let next = 0;
  let skipping = false;
  const worker = async (): Promise<void> => {
    while (next < calls.length) {
      const index = next++;
      const call = calls[index] as ToolCall;
      if (context.signal.aborted) throw abortReason(context.signal);
      if (skipping || context.steering.pending > 0) {
        skipping = true;
        results[index] = skipToolCall(context, call);
        continue;
      }
      results[index] = await executeToolCall(context, call);
    }
  };
  const workers = Math.max(1, Math.min(context.limits.parallelToolCalls, calls.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}
