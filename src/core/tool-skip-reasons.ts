/** Why a tool call the model asked for never launched: `steered`, a steering message took the turn over. */
export const toolSkipReasons = ['steered'] as const;

/** Why one tool call was skipped. */
export type ToolSkipReason = (typeof toolSkipReasons)[number];
