import type { ToolCall } from '../providers/model-provider.js';
import type { Tool } from '../tools/define-tool.js';
import { invokeTool } from '../tools/invoke-tool.js';
import type { RunContext } from './run-context.js';

/**
 * One attempt at a tool call: `execute` with the run's signal joined to the tool's own timeout. Resolves with the
 * output; rejects with what it threw, a `timeout` RuntimeError, or the run's abort reason.
 */
export function attemptTool(
  context: RunContext,
  tool: Tool,
  call: ToolCall,
  args: unknown,
): Promise<unknown> {
  return invokeTool(tool, args, {
    signal: context.signal,
    clock: context.clock,
    context: { toolCallId: call.id, sessionKey: context.sessionKey, runId: context.runId },
  });
}
