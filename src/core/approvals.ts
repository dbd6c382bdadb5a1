/** How long an operator's approval of a tool lasts when they ask for it to be remembered. */
export const approvalMemories = ['run', 'session'] as const;

/** `run` skips later approvals of that tool in the run, `session` for the rest of the session. */
export type ApprovalMemory = (typeof approvalMemories)[number];

/** What an operator can decide on a call that waits for approval. */
export const approvalDecisions = ['approve', 'reject', 'edit'] as const;

/** An operator's choice: run the call, refuse it, or run it with other arguments. */
export type ApprovalChoice = (typeof approvalDecisions)[number];
