import { abortReason } from '../core/index.js';
import { toErrorInfo } from '../core/index.js';
import { runFailureCode } from '../policies/index.js';
import type { ToolCall } from '../providers/index.js';
import type { RunContext } from './run-context.js';
import {
  executeToolCall,
  skipToolCall,
  type PendingCall,
  type ToolCallOptions,
  type ToolResult,
} from './tool-call.js';

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
