import type { EventOf, RuntimeEvent } from '../core/index.js';
import { describeEvent, seconds, type EventDescription } from './describe-event.js';
import { createTerminalStyle } from './terminal-style.js';

/** Options of `renderTimeline`. */
export interface TimelineOptions {
  /** Colour the lines with ANSI codes. */
  readonly color: boolean;
}

/** Renders a session's events a page at a time, so a long history never has to sit in memory at once. */
export interface TimelineRenderer {
  /** Fold in the next events (in seq order); returns the lines they complete. */
  push(events: readonly RuntimeEvent[]): string[];
  /** The lines still held back (a stream of deltas that ran to the end). */
  end(): string[];
}

/** Labels are padded to the longest one so details line up. */
const labelWidth = 'message collected'.length;

/** Consecutive deltas of one kind and run, gathered into one line. */
interface Stream {
  readonly first: EventOf<'assistant.delta'> | EventOf<'assistant.reasoning'>;
  text: string;
}

/** Create a renderer whose times are relative to the first event it is given. */
export function createTimelineRenderer(options: TimelineOptions): TimelineRenderer {
  const style = createTerminalStyle(options.color);
  let origin: number | undefined;
  let stream: Stream | undefined;

  const format = (at: number, runId: string | undefined, description: EventDescription): string => {
    const time = style.dim(`+${seconds(at - (origin ?? at))}`.padStart(9));
    const label = style[description.tone](description.label.padEnd(labelWidth));
    const details = [...(runId === undefined ? [] : [style.dim(runId)]), ...description.details];
    return `${time}  ${label}  ${details.join('  ')}`.trimEnd();
  };

  const flush = (): string[] => {
    if (stream === undefined) return [];
    const { first, text } = stream;
    stream = undefined;
    return [format(first.at, first.runId, describeEvent({ ...first, delta: text }))];
  };

  const pushOne = (event: RuntimeEvent): string[] => {
    origin ??= event.at;
    if (event.type === 'assistant.delta' || event.type === 'assistant.reasoning') {
      if (stream?.first.type === event.type && stream.first.runId === event.runId) {
        stream.text += event.delta;
        return [];
      }
      const lines = flush();
      stream = { first: event, text: event.delta };
      return lines;
    }
    return [...flush(), format(event.at, event.runId, describeEvent(event))];
  };

  return {
    push: (events) => events.flatMap(pushOne),
    end: flush,
  };
}

/**
 * A session's events as readable timeline lines: a time relative to the first event, a label and short details;
 * consecutive assistant deltas of a run become one line.
 */
export function renderTimeline(events: readonly RuntimeEvent[], options: TimelineOptions): string[] {
  const renderer = createTimelineRenderer(options);
  return [...renderer.push(events), ...renderer.end()];
}
