import { assertNever } from '../core/index.js';
import type { EventOf, RuntimeEvent } from '../core/index.js';
import { describePause } from './describe-pause.js';
import type { TerminalStyle } from './terminal-style.js';

/** How long quoted message and assistant text may get before it is cut. */
const textLimit = 80;
/** How long compact JSON (tool args and outputs) may get before it is cut. */
const jsonLimit = 60;

/** One timeline entry before layout: a label, coloured by kind, and the details after it. */
export interface EventDescription {
  readonly label: string;
  readonly tone: keyof TerminalStyle;
  readonly details: readonly string[];
}

/** Cut `text` to `limit` characters, marking the cut with an ellipsis. */
export function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1).trimEnd()}…`;
}

/** Quote text on one line (newlines and quotes escaped), cut to about 80 characters. */
export function quote(text: string): string {
  return JSON.stringify(truncate(text, textLimit));
}

/** Seconds with millisecond precision: `1.250s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(3)}s`;
}

function compactJson(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  return truncate(json ?? String(value), jsonLimit);
}

/** The `message.*` events. */
type MessageEvent = Extract<RuntimeEvent, { type: `message.${string}` }>;
/** The events of a tool call's run, from its call to its outcome. */
type ToolEvent = Extract<
  RuntimeEvent,
  { type: 'tool.called' | 'tool.succeeded' | 'tool.failed' | 'tool.skipped' }
>;

function describeMessage(event: MessageEvent): EventDescription {
  switch (event.type) {
    case 'message.received':
      return {
        label: 'message received',
        tone: 'cyan',
        details: [
          event.messageId,
          `${event.mode} -> ${event.disposition}`,
          ...(event.senderId === undefined ? [] : [`from ${event.senderId}`]),
          // The sender's authority (docs/semantics.md, "Authority in group chats"), in replay and the dashboard.
          ...(event.senderRole === undefined ? [] : [`as ${event.senderRole}`]),
          quote(event.text),
        ],
      };
    case 'message.queued':
      return {
        label: 'message queued',
        tone: 'cyan',
        details: [event.messageId, `position ${event.position}`],
      };
    case 'message.collected':
      return {
        label: 'message collected',
        tone: 'cyan',
        details: [event.messageId, `position ${event.position}`],
      };
    case 'message.steered':
      return { label: 'message steered', tone: 'cyan', details: [event.messageId] };
    case 'message.admitted':
      return { label: 'message admitted', tone: 'cyan', details: [event.messageIds.join(', ')] };
    case 'message.dropped':
      return {
        label: 'message dropped',
        tone: 'yellow',
        details: [
          event.messageId,
          event.reason,
          ...(event.summary === undefined ? [] : [quote(event.summary)]),
        ],
      };
    case 'message.duplicate':
      return { label: 'message duplicate', tone: 'dim', details: [event.messageId] };
    case 'message.rejected':
      return { label: 'message rejected', tone: 'yellow', details: [event.messageId, event.code] };
    default:
      return assertNever(event, 'message event');
  }
}

function describeRunEnd(event: EventOf<'run.ended'>): EventDescription {
  return {
    label: 'run ended',
    tone: event.status === 'completed' ? 'green' : 'red',
    details: [
      event.status,
      ...(event.error === undefined ? [] : [event.error.code]),
      seconds(event.durationMs),
      `tokens ${event.usage.inputTokens} in / ${event.usage.outputTokens} out`,
    ],
  };
}

function describeTool(event: ToolEvent): EventDescription {
  switch (event.type) {
    case 'tool.called':
      return {
        label: 'tool called',
        tone: 'blue',
        details: [event.tool, compactJson(event.args), event.toolCallId],
      };
    case 'tool.succeeded':
      return {
        label: 'tool succeeded',
        tone: 'blue',
        details: [event.tool, seconds(event.durationMs), compactJson(event.output), event.toolCallId],
      };
    case 'tool.failed':
      return {
        label: 'tool failed',
        tone: 'red',
        details: [
          event.tool,
          `${event.error.code}: ${truncate(event.error.message, jsonLimit)}`,
          event.toolCallId,
        ],
      };
    case 'tool.skipped':
      return {
        label: 'tool skipped',
        tone: 'yellow',
        details: [event.tool, quote(event.reason), event.toolCallId],
      };
    default:
      return assertNever(event, 'tool event');
  }
}

/**
 * Describe one event for the timeline. Streamed deltas are coalesced by the caller, so here they describe
 * a single delta.
 */
export function describeEvent(event: RuntimeEvent): EventDescription {
  switch (event.type) {
    case 'run.started':
      return {
        label: 'run started',
        tone: 'magenta',
        details: [`messages ${event.messageIds.join(', ')}`, `${event.provider}/${event.model}`],
      };
    case 'run.ended':
      return describeRunEnd(event);
    case 'assistant.delta':
      return { label: 'assistant text', tone: 'green', details: [quote(event.delta)] };
    case 'assistant.reasoning':
      return { label: 'reasoning', tone: 'dim', details: [quote(event.delta)] };
    case 'assistant.block':
      return {
        label: 'assistant block',
        tone: 'dim',
        details: [`#${event.index}`, `${event.text.length} chars`],
      };
    case 'assistant.final':
      return { label: 'assistant final', tone: 'green', details: [quote(event.text)] };
    case 'lane.waited':
      return {
        label: 'lane waited',
        tone: 'yellow',
        details: [event.lane, `waited ${seconds(event.waitedMs)}`, `position ${event.position}`],
      };
    case 'failover.rotated':
      return {
        label: 'profile rotated',
        tone: 'yellow',
        details: [
          `${event.provider}/${event.model}`,
          `${event.fromProfile} -> ${event.toProfile ?? 'none left'}`,
          event.reason,
        ],
      };
    case 'failover.fallback':
      return {
        label: 'model fallback',
        tone: 'yellow',
        details: [
          `${event.fromProvider}/${event.fromModel} -> ${event.toProvider}/${event.toModel}`,
          event.reason,
        ],
      };
    case 'profile.cooldown':
      return {
        label: 'profile cooling',
        tone: 'yellow',
        details: [event.profileId, event.reason, `until ${new Date(event.until).toISOString()}`],
      };
    case 'failover.waiting':
      return {
        label: 'failover waiting',
        tone: 'yellow',
        details: [event.profileId, `${event.waitMs} ms`, `${event.provider}/${event.model}`],
      };
    case 'delivery.in_doubt':
      return {
        label: 'delivery in doubt',
        tone: 'yellow',
        details: [event.consumer, `block ${event.blockIndex}`, event.reason],
      };
    case 'ledger.corrupt':
      return { label: 'ledger corrupt', tone: 'red', details: [event.table, event.row, event.message] };
    case 'ledger.unavailable':
      return { label: 'ledger unavailable', tone: 'red', details: [event.code, event.message] };
    case 'ledger.available':
      return { label: 'ledger available', tone: 'green', details: [`after ${seconds(event.unavailableMs)}`] };
    case 'subagent.spawned':
      return {
        label: 'subagent spawned',
        tone: 'magenta',
        details: [event.childKey, quote(event.task), event.toolCallId],
      };
    case 'subagent.ended':
      return {
        label: 'subagent ended',
        tone: event.status === 'completed' ? 'magenta' : 'red',
        details: [event.childKey, event.status, ...(event.error === undefined ? [] : [event.error.code])],
      };
    case 'thinking.lowered':
      return {
        label: 'thinking lowered',
        tone: 'yellow',
        details: [event.model, `${event.from} -> ${event.to}`],
      };
    case 'cost.updated':
      return {
        label: 'cost',
        tone: 'dim',
        details: [
          `${event.provider}/${event.model}`,
          `${event.inputTokens} in / ${event.outputTokens} out`,
          event.priced ? `$${event.cost.toFixed(6)} (run $${event.cumulativeCost.toFixed(6)})` : 'no price',
        ],
      };
    case 'compaction.started':
    case 'compaction.ended':
      return { label: event.type, tone: 'dim', details: [] };
    case 'message.received':
    case 'message.queued':
    case 'message.collected':
    case 'message.steered':
    case 'message.admitted':
    case 'message.dropped':
    case 'message.duplicate':
    case 'message.rejected':
      return describeMessage(event);
    case 'tool.called':
    case 'tool.succeeded':
    case 'tool.failed':
    case 'tool.skipped':
      return describeTool(event);
    case 'run.paused':
    case 'run.resumed':
    case 'approval.requested':
    case 'approval.resolved':
    case 'tool.deferred':
    case 'tool.in_doubt':
    case 'tool.supplied':
    case 'undo.enqueued':
    case 'undo.executed':
    case 'undo.failed':
    case 'undo.in_doubt':
    case 'step.executed':
      return describePause(event);
    default:
      return assertNever(event, 'event type');
  }
}
