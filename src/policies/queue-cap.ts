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

/** The one-line summaries of dropped messages a session keeps: the newest `limit`, and a count of the rest. */
export interface DropSummaries {
  readonly kept: readonly string[];
  readonly omitted: number;
}

/**
 * Add a dropped message's summary, keeping at most `limit` lines (the newest) and counting the older ones, so
 * a flood of messages while a run hangs costs `limit` lines of prompt and memory, not one per message.
 */
export function keepDropSummary(summaries: DropSummaries, summary: string, limit: number): DropSummaries {
  const all = [...summaries.kept, summary];
  const keep = Math.max(0, Math.floor(limit));
  const excess = Math.max(0, all.length - keep);
  return { kept: all.slice(excess), omitted: summaries.omitted + excess };
}
