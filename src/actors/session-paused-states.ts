import { pausedAdmission } from './session-admission-states.js';

/**
 * What a paused session does with events (both pause states): settle calls and end the paused run on an abort.
 * Messages are admitted by `pausedAdmission` (a steer is queued as a followup; an interrupting message ends it).
 */
const pausedEvents = {
  'PAUSE.SETTLED': { actions: 'settlePaused' },
  ABORT: { target: 'running', actions: 'abortPaused' },
} as const;

/** The run waits for an operator's decisions (and maybe tool results); it resumes once nothing waits. */
export const awaitingApprovalState = {
  always: [
    { guard: 'nothingWaits', target: 'running', actions: 'continueRun' },
    { guard: 'noApprovalWaits', target: 'awaiting_tool_results', actions: 'awaitToolResults' },
  ],
  after: { pauseDelay: { target: 'running', actions: 'continueRun' } },
  on: {
    ...pausedEvents,
    ...pausedAdmission('awaiting_approval'),
    HYDRATED: { target: 'awaiting_approval', reenter: true },
  },
} as const;

/** The run waits for results of deferred calls only; it resumes once nothing waits. */
export const awaitingToolResultsState = {
  always: { guard: 'nothingWaits', target: 'running', actions: 'continueRun' },
  after: { pauseDelay: { target: 'running', actions: 'continueRun' } },
  on: {
    ...pausedEvents,
    ...pausedAdmission('awaiting_tool_results'),
    HYDRATED: { target: 'awaiting_tool_results', reenter: true },
  },
} as const;
