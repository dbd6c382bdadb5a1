/**
 * What a paused session does with events (both pause states): settle calls, queue messages (admission already
 * turned a steer into a followup), and end the paused run on an abort or an interrupting message.
 */
const pausedEvents = {
  'PAUSE.SETTLED': { actions: 'settlePaused' },
  ENQUEUE: { actions: 'queueWhilePaused' },
  INTERRUPT: { target: 'running', actions: 'interruptPaused' },
  ABORT: { target: 'running', actions: 'abortPaused' },
} as const;

/** The run waits for an operator's decisions (and maybe tool results); it resumes once nothing waits. */
export const awaitingApprovalState = {
  always: [
    { guard: 'nothingWaits', target: 'running', actions: 'continueRun' },
    { guard: 'noApprovalWaits', target: 'awaiting_tool_results', actions: 'awaitToolResults' },
  ],
  after: { pauseDelay: { target: 'running', actions: 'continueRun' } },
  on: { ...pausedEvents, HYDRATED: { target: 'awaiting_approval', reenter: true } },
} as const;

/** The run waits for results of deferred calls only; it resumes once nothing waits. */
export const awaitingToolResultsState = {
  always: { guard: 'nothingWaits', target: 'running', actions: 'continueRun' },
  after: { pauseDelay: { target: 'running', actions: 'continueRun' } },
  on: { ...pausedEvents, HYDRATED: { target: 'awaiting_tool_results', reenter: true } },
} as const;
