import { describeEvent, type EventDescription } from '../../src/cli/describe-event.js';
import type { RuntimeEvent } from './api.js';

/** One line of a session's timeline: the `agentlanes replay` vocabulary, one entry per event. */
export interface TimelineEntry {
  /** The cursor of the entry's first event: stable, so the list keeps its DOM nodes. */
  readonly id: number;
  readonly at: number;
  readonly runId: string | undefined;
  readonly description: EventDescription;
}

/** The most entries a session view keeps; older ones scroll away. */
export const timelineLimit = 500;

/**
 * Fold one event into the timeline: consecutive assistant deltas (or reasoning) of one run extend the last entry,
 * as `agentlanes replay` prints them on one line. Returns a new array.
 */
export function foldEvent(
  entries: readonly TimelineEntry[],
  streamText: Map<number, string>,
  event: RuntimeEvent,
): TimelineEntry[] {
  const last = entries[entries.length - 1];
  if (event.type === 'assistant.delta' || event.type === 'assistant.reasoning') {
    const lastType = last === undefined ? undefined : streamText.get(last.id);
    if (last !== undefined && lastType !== undefined && last.runId === event.runId) {
      const kind = event.type === 'assistant.delta' ? 'assistant text' : 'reasoning';
      if (last.description.label === kind) {
        const text = lastType + event.delta;
        streamText.set(last.id, text);
        const description = describeEvent({ ...event, delta: text });
        return [...entries.slice(0, -1), { ...last, description }];
      }
    }
    streamText.set(event.cursor, event.delta);
  }
  const entry = { id: event.cursor, at: event.at, runId: event.runId, description: describeEvent(event) };
  const next = [...entries, entry];
  return next.length > timelineLimit ? next.slice(next.length - timelineLimit) : next;
}
