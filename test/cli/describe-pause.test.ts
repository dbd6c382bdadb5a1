import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../src/cli/describe-event.js';
import type { RuntimeEvent } from '../../src/core/events.js';

const envelope = { sessionKey: 's', seq: 1, cursor: 1, at: 0, runId: 'r1' };

describe('describeEvent (pauses, approvals, undo, plan steps)', () => {
  it('names the tool, the call and the decision of approval events', () => {
    const requested = { ...envelope, type: 'approval.requested', toolCallId: 'c1', tool: 'refund', args: {} };
    const resolved = {
      ...envelope,
      type: 'approval.resolved',
      toolCallId: 'c1',
      tool: 'refund',
      decision: 'reject',
      remember: 'run',
    };
    expect(describeEvent(requested as RuntimeEvent)).toEqual({
      label: 'approval requested',
      tone: 'yellow',
      details: ['refund', 'c1'],
    });
    expect(describeEvent(resolved as RuntimeEvent)).toEqual({
      label: 'approval resolved',
      tone: 'red',
      details: ['reject', 'refund', 'c1', 'remember run'],
    });
  });

  it('shows a pause with what it waits for, and a failed plan step with its error code', () => {
    const paused = {
      ...envelope,
      type: 'run.paused',
      state: 'awaiting_tool_results',
      toolCallIds: ['a', 'b'],
    };
    const step = {
      ...envelope,
      type: 'step.executed',
      stepId: 'fetch-1',
      tool: 'fetch',
      success: false,
      executionTime: 5,
      retries: 3,
      error: { code: 'timeout', message: 'slow' },
    };
    expect(describeEvent(paused as RuntimeEvent).details).toEqual([
      'awaiting_tool_results',
      'waits for a, b',
    ]);
    expect(describeEvent(step as RuntimeEvent)).toMatchObject({
      label: 'step executed',
      tone: 'red',
      details: ['fetch-1', 'fetch', 'timeout', 'retries 3'],
    });
  });
});
