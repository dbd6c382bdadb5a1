/** How long an operator's approval of a tool lasts when they ask for it to be remembered. */
export const approvalMemories = ['run', 'session'] as const;

/** `run` skips later approvals of that tool in the run, `session` for the rest of the session. */
export type ApprovalMemory = (typeof approvalMemories)[number];

/** What an operator can decide on a call that waits for approval. */
export const approvalDecisions = ['approve', 'reject', 'edit'] as const;

/** An operator's choice: run the call, refuse it, or run it with other arguments. */
export type ApprovalChoice = (typeof approvalDecisions)[number];

/**
 * The id of one approval request (`approvalId` on `approval.requested` and `tool.in_doubt`). A call's or a plan
 * step's first request is named by its own id; a request to run it again after a crash left it in doubt is named
 * by the id and the run's resume that found it (`refund-1~2`), so an answer given to the first request (an event
 * re-delivered after a restart, an old button, a re-posted `useChat` message) cannot run it a second time.
 */
export function approvalIdOf(id: string, inDoubtAtResume?: number): string {
  return inDoubtAtResume === undefined ? id : `${id}~${inDoubtAtResume}`;
}
