import { describe, expect, it } from 'vitest';
import { isRuntimeError, type PendingCall, type RuntimeEvent } from 'agentlanes';
import { answersOf, toolPartsOf } from '../../src/server/chat-approvals.js';
import { startTranslation, translateEvent } from '../../src/server/ui-message-chunks.js';

const envelope = { sessionKey: 'web:1', seq: 7, cursor: 7, at: 0, runId: 'run_1' };

/** A call of `web:1`'s paused run that waits for approval under `approvalId`. */
function waiting(approvalId: string): PendingCall {
  return {
    sessionKey: 'web:1',
    runId: 'run_1',
    toolCallId: 'c1',
    approvalId,
    tool: 'refund',
    args: {},
    kind: approvalId === 'c1' ? 'approval' : 'in_doubt',
    requestedAt: 0,
  };
}

/** The tool part `useChat` posts back after `addToolApprovalResponse` answered approval `id`. */
const responded = (id: string) => {
  const part = {
    type: 'tool-refund',
    toolCallId: 'c1',
    state: 'approval-responded',
    approval: { id, approved: true },
  };
  return toolPartsOf([part]);
};

describe('useChat approvals name the request they answer', () => {
  it('streams the approval id of the request: a call asked again in doubt gets its new id', () => {
    const requested = (approvalId: string): RuntimeEvent => ({
      ...envelope,
      type: 'approval.requested',
      toolCallId: 'c1',
      tool: 'refund',
      args: {},
      approvalId,
    });
    const first = translateEvent(startTranslation('run_1'), requested('c1'));
    const again = translateEvent(startTranslation('run_1'), requested('c1~50000'));
    expect(first.filter((chunk) => chunk.type === 'tool-approval-request')).toEqual([
      { type: 'tool-approval-request', approvalId: 'c1', toolCallId: 'c1' },
    ]);
    expect(again.filter((chunk) => chunk.type === 'tool-approval-request')).toEqual([
      { type: 'tool-approval-request', approvalId: 'c1~50000', toolCallId: 'c1' },
    ]);
  });

  it('refuses a re-posted answer to the first request once the call waits in doubt, and takes the new one', () => {
    let refused: unknown;
    try {
      answersOf(responded('c1'), [waiting('c1~50000')]);
    } catch (error) {
      refused = error;
    }
    expect(isRuntimeError(refused, 'not_found')).toBe(true);
    expect(answersOf(responded('c1~50000'), [waiting('c1~50000')])).toEqual([
      { kind: 'approval', toolCallId: 'c1', approvalId: 'c1~50000', approved: true },
    ]);
  });
});
