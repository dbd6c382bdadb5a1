import { assertNever } from '../../core/index.js';
import { eventGuard } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';

/** The notable moments of the demo (steers, interrupts, stops, approvals, failover), one short line each. */
export interface DemoTicker {
  /** Read one event; returns its line when it is worth showing. */
  note(event: RuntimeEvent, elapsedMs: number): string | undefined;
  /** The latest `count` lines, oldest first. */
  recent(count: number): readonly string[];
}

/** The longest stretch of a message's text quoted in a line. */
const quoteLimit = 36;

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return `"${flat.length > quoteLimit ? `${flat.slice(0, quoteLimit - 1)}…` : flat}"`;
}

/** The event types the ticker may show a line for; every other event is never notable. */
const mayBeNotable = eventGuard([
  'message.steered',
  'message.received',
  'run.ended',
  'approval.requested',
  'approval.resolved',
  'failover.rotated',
  'failover.fallback',
  'failover.waiting',
]);

function describeNotable(event: RuntimeEvent, texts: ReadonlyMap<string, string>): string | undefined {
  if (!mayBeNotable(event)) return undefined;
  switch (event.type) {
    case 'message.steered':
      return `steered ${quote(texts.get(event.messageId) ?? '')} into the running answer`;
    case 'message.received':
      return event.mode === 'interrupt' ? `interrupt ${quote(event.text)}` : undefined;
    case 'run.ended':
      if (event.status === 'interrupted') return 'run interrupted: the interrupting message runs next';
      if (event.status === 'aborted') return 'run stopped by /stop, partial answer kept';
      return undefined;
    case 'approval.requested':
      return `approval needed: ${event.tool} ${JSON.stringify(event.args)}`;
    case 'approval.resolved':
      return `operator: ${event.decision} ${event.tool}`;
    case 'failover.rotated':
      return `${event.reason} on ${event.fromProfile}: rotated to ${event.toProfile ?? 'no other key'}`;
    case 'failover.fallback':
      return `fell back ${event.fromModel} -> ${event.toModel} (${event.reason})`;
    case 'failover.waiting':
      return `every key cooling: waiting ${(event.waitMs / 1000).toFixed(1)}s for ${event.profileId}`;
    default:
      return assertNever(event, 'notable event');
  }
}

/** Create a ticker that keeps the latest `keep` lines. */
export function createDemoTicker(keep = 50): DemoTicker {
  const texts = new Map<string, string>();
  const lines: string[] = [];
  return {
    note(event, elapsedMs) {
      if (event.type === 'message.received') texts.set(event.messageId, event.text);
      const described = describeNotable(event, texts);
      if (described === undefined) return undefined;
      const line = `${(elapsedMs / 1000).toFixed(1).padStart(5)}s ${event.sessionKey.replace(/^demo:/, '')} ${described}`;
      lines.push(line);
      if (lines.length > keep) lines.shift();
      return line;
    },
    recent(count) {
      return lines.slice(-count);
    },
  };
}
