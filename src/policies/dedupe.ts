/** How long an accepted message id is remembered for redelivery checks (5 minutes). */
export const dedupeWindowMs = 5 * 60_000;

/** An accepted message id and when it was accepted (ms); plain data, so it fits a persisted snapshot. */
export type SeenMessage = readonly [messageId: string, acceptedAt: number];

/** True when `messageId` was accepted less than `windowMs` before `now`. */
export function isDuplicate(
  seen: readonly SeenMessage[],
  messageId: string,
  now: number,
  windowMs = dedupeWindowMs,
): boolean {
  return seen.some(([id, acceptedAt]) => id === messageId && now - acceptedAt < windowMs);
}

/** A new list with expired entries (and any older entry for this id) pruned and `messageId` appended. */
export function rememberMessage(
  seen: readonly SeenMessage[],
  messageId: string,
  now: number,
  windowMs = dedupeWindowMs,
): [string, number][] {
  const kept: [string, number][] = [];
  for (const [id, acceptedAt] of seen) {
    if (id !== messageId && now - acceptedAt < windowMs) kept.push([id, acceptedAt]);
  }
  kept.push([messageId, now]);
  return kept;
}
