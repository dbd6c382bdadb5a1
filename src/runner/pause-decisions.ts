import type { ApprovalDecision, ToolCallResult } from '../ledger/index.js';
import type { SessionScope } from './session-scope.js';
import type { WaitingCall } from './session-control.js';

/**
 * Settle a call waiting for approval with an operator's decision in the session machine (it resumes the run
 * when nothing waits), then record and announce it. When the last approval settled while deferred calls still wait, the run now waits for their results.
 */
export async function settleApproval(
  scope: SessionScope,
  call: WaitingCall,
  decision: ApprovalDecision,
): Promise<void> {
  const { ledger, clock } = scope.services;
  const { runId, turn, position } = call;
  // The session machine settles the call first: an answer it refuses changes nothing, recorded or announced.
  const after = scope.control.settleCall(call, 'approval');
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
  const moved = after.state === 'awaiting_tool_results';
  await Promise.all([written, ...(moved ? [ledger.setRunStatus(runId, 'awaiting_tool_results')] : [])]);
}

/** Settle a deferred call with its supplied result in the session machine, then record and announce it. */
export async function settleSupplied(
  scope: SessionScope,
  call: WaitingCall,
  result: ToolCallResult,
): Promise<void> {
  const { ledger, clock } = scope.services;
  const { runId, turn, position } = call;
  scope.control.settleCall(call, 'deferred');
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
  await written;
}
