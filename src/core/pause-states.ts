/** Why a run paused: for an operator's decision, or for results supplied from outside. */
export const pauseStates = ['awaiting_approval', 'awaiting_tool_results'] as const;

/** The state of a paused run. */
export type PauseState = (typeof pauseStates)[number];
