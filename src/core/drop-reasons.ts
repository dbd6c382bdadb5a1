/** Why a message left the queue without running: the cap dropped it (`cap_old`, `cap_summarize`), or a caller. */
export const dropReasons = ['cap_old', 'cap_summarize', 'cancelled', 'cleared'] as const;

/** Why one message was dropped. */
export type DropReason = (typeof dropReasons)[number];
