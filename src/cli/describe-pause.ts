import { assertNever } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { EventDescription } from './describe-event.js';

/** The events of pauses, approvals, deferred calls, undo and plan steps. */
export type PauseEvent = Extract<
  RuntimeEvent,
  {
    type:
      | 'run.paused'
      | 'run.resumed'
      | 'approval.requested'
      | 'approval.resolved'
      | 'tool.deferred'
      | 'tool.in_doubt'
      | 'tool.supplied'
      | 'undo.enqueued'
      | 'undo.executed'
      | 'undo.failed'
      | 'undo.in_doubt'
      | 'step.executed';
  }
>;

/** Describe pauses, approvals, deferred calls, undo and plan steps. */
export function describePause(event: PauseEvent): EventDescription {
  switch (event.type) {
    case 'run.paused':
      return {
        label: 'run paused',
        tone: 'yellow',
        details: [event.state, `waits for ${event.toolCallIds.join(', ')}`],
      };
    case 'run.resumed':
      return {
        label: 'run resumed',
        tone: 'magenta',
        details:
          event.reason === undefined
            ? [`from ${event.from ?? 'running'}`]
            : [`after a ${event.reason}`, `attempt ${event.attempt ?? 1}`],
      };
    case 'tool.in_doubt':
      return { label: 'tool in doubt', tone: 'red', details: [event.tool, event.toolCallId, event.reason] };
    case 'approval.requested':
      return { label: 'approval requested', tone: 'yellow', details: [event.tool, event.toolCallId] };
    case 'approval.resolved':
      return {
        label: 'approval resolved',
        tone: event.decision === 'approve' || event.decision === 'edit' ? 'green' : 'red',
        details: [
          event.decision,
          event.tool,
          event.toolCallId,
          ...(event.remember === undefined ? [] : [`remember ${event.remember}`]),
        ],
      };
    case 'tool.deferred':
      return { label: 'tool deferred', tone: 'yellow', details: [event.tool, event.toolCallId] };
    case 'tool.supplied':
      return {
        label: 'tool supplied',
        tone: 'blue',
        details: [event.tool, event.isError ? 'error' : 'output', event.toolCallId],
      };
    case 'undo.enqueued':
      return {
        label: 'undo recorded',
        tone: 'dim',
        details: [event.tool, `#${event.index}`, event.toolCallId],
      };
    case 'undo.executed':
      return { label: 'undone', tone: 'green', details: [event.tool, `#${event.index}`, event.toolCallId] };
    case 'undo.failed':
      return {
        label: 'undo failed',
        tone: 'red',
        details: [event.tool, `#${event.index}`, event.error.code],
      };
    case 'undo.in_doubt':
      return {
        label: 'undo in doubt',
        tone: 'yellow',
        details: [event.tool, `#${event.index}`, event.reason],
      };
    case 'step.executed':
      return {
        label: 'step executed',
        tone: event.success ? 'green' : 'red',
        details: [
          event.stepId,
          event.tool,
          event.success ? 'ok' : (event.error?.code ?? 'failed'),
          `retries ${event.retries}`,
        ],
      };
    default:
      return assertNever(event, 'pause event');
  }
}
