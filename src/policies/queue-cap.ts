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
