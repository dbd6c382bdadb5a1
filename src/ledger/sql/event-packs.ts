import type { RuntimeEvent } from '../../core/index.js';
import { coalesceSpan } from './delta-coalescer.js';
import { eventRow } from './params.js';
import type { EventRow } from './rows.js';

/**
 * Event packs: the events of one session written in one transaction (a run's `assistant.block`, `cost.updated`,
 * `assistant.final`, or a message's `message.received` and the `run.started` it starts) are stored as one row, not
 * one row each. A row costs its envelope (session key, run id, type, seq, time) and two index entries
 * (`events_by_session` and the primary key); a pack pays them once. Token deltas are not packed: they already
 * coalesce per run (delta-coalescer.ts), and recovery reads them by type.
 *
 * A pack row is an ordinary `events` row of type `pack`: its cursor, seq and time those of its last event (so the
 * queries by cursor, a session's last seq and pruning by age read it as they read any row), its run id the last
 * event's, and its body a JSON list with one entry per event, `[cursorBack, seqBack, atBack, type, body, runId?]`:
 * the event's cursor, seq and time as steps back from the row's, its type, its body as an ordinary row's, and its
 * run id only when it is not the row's (`null`: none). A pack spans fewer than `coalesceSpan` cursors, as a
 * coalesced delta row does, so a page read finds every row holding an event within it (delta-rows.ts).
 */
export const packType = 'pack';

/** Events per pack at most (a session's burst of tool events in one transaction is split). */
const packSize = 64;

/**
 * How far apart in time (ms) the events of one pack are at most. Pruning by age deletes the packs whose events are
 * all older than its bound and rewrites the few that straddle it, found as the packs whose newest event is less
 * than this much newer than the bound.
 */
export const packTimeSpan = 1000;

/** The parameters of one `events` row (an event's, or a pack's). */
export type EventRowParams = Omit<ReturnType<typeof eventRow>, 'type'> & { readonly type: string };

/** The pack row of `events` (two or more, one session, in cursor order). */
function packRow(events: readonly RuntimeEvent[]): EventRowParams {
  const last = events[events.length - 1] as RuntimeEvent;
  const runId = last.runId ?? null;
  const at = events.reduce((latest, event) => Math.max(latest, event.at), last.at);
  const entries = events.map((event) => {
    const row = eventRow(event);
    const own = row.run_id === runId ? '' : `,${JSON.stringify(row.run_id)}`;
    return `[${last.cursor - event.cursor},${last.seq - event.seq},${at - event.at},${JSON.stringify(row.type)},${row.body}${own}]`;
  });
  return { ...eventRow(last), type: packType, at, body: `[${entries.join(',')}]` };
}

/**
 * The rows to write for `events` (one transaction's, in the order appended): each session's events other than
 * token deltas packed, a pack closed at `packSize` events or before it would span `coalesceSpan` cursors or
 * `packTimeSpan` ms; a pack of one is an ordinary row.
 */
export function eventRows(events: readonly RuntimeEvent[]): EventRowParams[] {
  const rows: EventRowParams[] = [];
  const open = new Map<string, OpenPack>();
  const close = (events: readonly RuntimeEvent[]): void => {
    rows.push(events.length === 1 ? eventRow(events[0] as RuntimeEvent) : packRow(events));
  };
  for (const event of events) {
    if (event.type === 'assistant.delta') {
      rows.push(eventRow(event));
      continue;
    }
    const pack = open.get(event.sessionKey);
    if (pack !== undefined && fits(pack, event)) {
      pack.events.push(event);
      pack.earliest = Math.min(pack.earliest, event.at);
      pack.latest = Math.max(pack.latest, event.at);
      continue;
    }
    if (pack !== undefined) close(pack.events);
    open.set(event.sessionKey, { events: [event], earliest: event.at, latest: event.at });
  }
  for (const pack of open.values()) close(pack.events);
  return rows;
}

/** A pack being gathered: its events and the span of their times. */
interface OpenPack {
  readonly events: RuntimeEvent[];
  earliest: number;
  latest: number;
}

/** Whether `event` may join `pack`: room left, after its last event, within the cursor and time spans. */
function fits(pack: OpenPack, event: RuntimeEvent): boolean {
  const { events } = pack;
  const first = events[0] as RuntimeEvent;
  return (
    events.length < packSize &&
    event.cursor > (events[events.length - 1] as RuntimeEvent).cursor &&
    event.cursor - first.cursor < coalesceSpan &&
    Math.max(pack.latest, event.at) - Math.min(pack.earliest, event.at) <= packTimeSpan
  );
}

/** One event of a pack as a row of its own, its body already parsed. */
export interface PackedRow extends Omit<EventRow, 'body'> {
  readonly body: unknown;
}

function isStep(value: unknown): value is number {
  return Number.isSafeInteger(value);
}

/** One entry of a pack row, or what is wrong with it. */
function entryOf(row: EventRow, entry: unknown): PackedRow | string {
  if (!Array.isArray(entry) || entry.length < 5 || entry.length > 6)
    return 'an entry is not a list of 5 or 6';
  const [cursorBack, seqBack, atBack, type, body, runId] = entry as unknown[];
  if (!isStep(cursorBack) || !isStep(seqBack) || !isStep(atBack))
    return 'an entry has no cursor, seq or time';
  if (cursorBack < 0 || cursorBack >= coalesceSpan) return 'an entry lies outside the row';
  if (typeof type !== 'string') return 'an entry has no type';
  if (runId !== undefined && runId !== null && typeof runId !== 'string') return 'an entry has a bad run id';
  return {
    cursor: row.cursor - cursorBack,
    session_key: row.session_key,
    seq: row.seq - seqBack,
    type,
    run_id: entry.length === 6 ? ((runId as string | null) ?? null) : row.run_id,
    at: row.at - atBack,
    body,
  };
}

/** The events of a pack row as rows of their own, in cursor order, or what is wrong with the row. */
export function unpackRow(row: EventRow): PackedRow[] | string {
  let entries: unknown;
  try {
    entries = JSON.parse(row.body);
  } catch {
    return 'pack body is not valid JSON';
  }
  if (!Array.isArray(entries) || entries.length === 0) return 'pack body is not a list of events';
  const rows: PackedRow[] = [];
  for (const entry of entries) {
    const packed = entryOf(row, entry);
    if (typeof packed === 'string') return `pack: ${packed}`;
    if (rows.length > 0 && !(packed.cursor > (rows[rows.length - 1] as PackedRow).cursor)) {
      return 'pack: entries are not in cursor order';
    }
    rows.push(packed);
  }
  if ((rows[rows.length - 1] as PackedRow).cursor !== row.cursor)
    return 'pack: its last entry is not the row';
  return rows;
}
