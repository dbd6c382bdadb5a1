/** How long an accepted message id is remembered for redelivery checks (5 minutes). */
export const dedupeWindowMs = 5 * 60_000;

/**
 * Most ids remembered per session: the window is 5 minutes or the latest 1000 ids, whichever is shorter, so a
 * very busy session's snapshot and per-message cost stay bounded.
 */
export const dedupeMaxIds = 1000;

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

/**
 * A new list with expired entries (and any older entry for this id) pruned, `messageId` appended, and at most
 * `maxIds` entries kept (the oldest go first).
 */
export function rememberMessage(
  seen: readonly SeenMessage[],
  messageId: string,
  now: number,
  windowMs = dedupeWindowMs,
  maxIds = dedupeMaxIds,
): [string, number][] {
  const kept: [string, number][] = [];
  const first = Math.max(0, seen.length + 1 - maxIds);
  for (let index = first; index < seen.length; index++) {
    const [id, acceptedAt] = seen[index] as SeenMessage;
    if (id !== messageId && now - acceptedAt < windowMs) kept.push([id, acceptedAt]);
  }
  kept.push([messageId, now]);
  return kept;
}
