/** Reasoning effort a request may ask for, from none to the most (a failover lowers it one step at a time). */
export const thinkingLevels = ['off', 'minimal', 'low', 'medium', 'high'] as const;

/** A thinking (reasoning effort) level. */
export type ThinkingLevel = (typeof thinkingLevels)[number];
