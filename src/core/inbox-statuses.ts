/** The life of an accepted inbound message, as the inbox records it. */
export const inboxStatuses = ['pending', 'steered', 'collected', 'consumed', 'dropped', 'cancelled'] as const;

/** Where an accepted message stands. */
export type InboxStatus = (typeof inboxStatuses)[number];
