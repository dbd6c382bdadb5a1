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
  // Newest first: a redelivery is usually recent.
  for (let index = seen.length - 1; index >= 0; index--) {
    const entry = seen[index] as SeenMessage;
    if (entry[0] === messageId) return now - entry[1] < windowMs;
  }
  return false;
}

/**
 * A new list with expired entries (and any older entry for this id) pruned, `messageId` appended, and at most
 * `maxIds` entries kept (the oldest go first). Entries are kept in acceptance order, so the expired ones are a
 * prefix; the kept entries are shared, not copied (this runs for every message).
 */
export function rememberMessage(
  seen: readonly SeenMessage[],
  messageId: string,
  now: number,
  windowMs = dedupeWindowMs,
  maxIds = dedupeMaxIds,
): SeenMessage[] {
  let start = Math.max(0, seen.length + 1 - maxIds);
  while (start < seen.length && now - (seen[start] as SeenMessage)[1] >= windowMs) start++;
  const kept = seen.slice(start);
  const previous = kept.findIndex((entry) => entry[0] === messageId);
  if (previous >= 0) kept.splice(previous, 1);
  kept.push([messageId, now]);
  return kept;
}
