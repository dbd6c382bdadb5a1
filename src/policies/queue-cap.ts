import type { QueueSettings } from './queue-settings.js';

/** What to do with a newcomer given the queue's length: accept (maybe dropping the oldest) or refuse. */
export type CapDecision =
  | { readonly accept: true; readonly drop: 0 | 1; readonly summarize: boolean }
  | { readonly accept: false; readonly code: 'queue_full' };

/** Decide whether a newcomer enters a queue that already holds `queueLength` messages. */
export function decideCap(queueLength: number, settings: Pick<QueueSettings, 'cap' | 'drop'>): CapDecision {
  if (queueLength < settings.cap) return { accept: true, drop: 0, summarize: false };
  switch (settings.drop) {
    case 'new':
      return { accept: false, code: 'queue_full' };
    case 'old':
      return { accept: true, drop: 1, summarize: false };
    case 'summarize':
      return { accept: true, drop: 1, summarize: true };
  }
}

/**
 * How many dropped messages keep their own summary line until the next run takes them: a fixed bound, not the
 * cap, so a small cap never loses the content of a drop, and a flood costs at most this many prompt lines.
 */
export const dropSummaryLimit = 20;

/** The one-line summaries of dropped messages a session keeps: the first `limit`, and a count of the rest. */
export interface DropSummaries {
  readonly kept: readonly string[];
  readonly omitted: number;
}

/**
 * Add a dropped message's summary: it gets its own line while fewer than `limit` are kept, else it is only
 * counted, so a flood of messages while a run hangs costs `limit` lines of prompt and memory, not one per message.
 */
export function keepDropSummary(
  summaries: DropSummaries,
  summary: string,
  limit: number = dropSummaryLimit,
): DropSummaries {
  const keep = Math.max(0, Math.floor(limit));
  if (summaries.kept.length < keep) return { kept: [...summaries.kept, summary], omitted: summaries.omitted };
  return { kept: summaries.kept, omitted: summaries.omitted + 1 };
}
