import { pauseStates } from './pause-states.js';

/** Every run ends with one of these statuses. */
export const runStatuses = ['completed', 'aborted', 'failed', 'timeout', 'crashed', 'interrupted'] as const;

/** How a run ended. */
export type RunStatus = (typeof runStatuses)[number];

/** The statuses of a run that has not ended: running, or paused in one of the pause states. */
export const openRunStatuses = ['running', ...pauseStates] as const;

/** Where a run that has not ended stands. */
export type OpenRunStatus = (typeof openRunStatuses)[number];

/** Every status a recorded run can have, open or ended. */
export const recordedRunStatuses = [...openRunStatuses, ...runStatuses] as const;

/** The status of a recorded run. */
export type RecordedRunStatus = (typeof recordedRunStatuses)[number];
