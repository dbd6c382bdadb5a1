import type { ApprovalDecision, ToolCallResult } from '../ledger/index.js';
import type { SessionScope } from './session-scope.js';

/** A call of the session's paused run that waits for an operator's decision or a supplied result. */
export interface WaitingCall {
  readonly runId: string;
  readonly toolCallId: string;
  readonly tool: string;
  readonly turn: number;
  readonly position: number;
}

/**
 * Record an operator's decision on a call waiting for approval and tell the session (it resumes when nothing
 * waits). When the last approval settled while deferred calls still wait, the run now waits for their results.
 */
export async function settleApproval(
  scope: SessionScope,
  call: WaitingCall,
  decision: ApprovalDecision,
): Promise<void> {
  const { ledger, clock } = scope.services;
  const { runId, turn, position } = call;
  const written = ledger.updateToolCall(
    { runId, turn, position },
    {
      status: decision.decision === 'reject' ? 'rejected' : 'approved',
      decision,
      resolvedAt: clock.now(),
    },
  );
  scope.control.emit({
    type: 'approval.resolved',
    runId,
    toolCallId: call.toolCallId,
    tool: call.tool,
    decision: decision.decision,
    ...(decision.remember === undefined ? {} : { remember: decision.remember }),
    ...(decision.message === undefined ? {} : { message: decision.message }),
  });
  const after = scope.control.settleCall(turn, position);
  const moved = after.state === 'awaiting_tool_results' && after.runId === runId;
  await Promise.all([written, ...(moved ? [ledger.setRunStatus(runId, 'awaiting_tool_results')] : [])]);
}

/** Record the supplied result of a deferred call and tell the session (it resumes when nothing waits). */
export async function settleSupplied(
  scope: SessionScope,
  call: WaitingCall,
  result: ToolCallResult,
): Promise<void> {
  const { ledger, clock } = scope.services;
  const { runId, turn, position } = call;
  const written = ledger.updateToolCall(
    { runId, turn, position },
    { status: 'supplied', result, resolvedAt: clock.now() },
  );
  scope.control.emit({
    type: 'tool.supplied',
    runId,
    toolCallId: call.toolCallId,
    tool: call.tool,
    isError: result.isError,
  });
  scope.control.settleCall(turn, position);
  await written;
}
