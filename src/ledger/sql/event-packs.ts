import type { RuntimeEvent } from '../../core/index.js';
import { coalesceSpan } from './delta-coalescer.js';
import { eventRow } from './params.js';
import { parseBody } from './body-pieces.js';
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
 *
 * The SQLite ledger writes packs; both SQL ledgers read them. The Postgres ledger still writes one row per event
 * (its writes are gathered as columns per transaction, and its cluster checks read rows by type).
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

/** The pack row of `rows` (two or more events' rows, one session, in cursor order). */
function packRow(rows: readonly EventRowParams[]): EventRowParams {
  const last = rows[rows.length - 1] as EventRowParams;
  const at = rows.reduce((latest, row) => Math.max(latest, row.at), last.at);
  const entries = rows.map((row) => {
    const own = row.run_id === last.run_id ? '' : `,${JSON.stringify(row.run_id)}`;
    return `[${last.cursor - row.cursor},${last.seq - row.seq},${at - row.at},${JSON.stringify(row.type)},${row.body}${own}]`;
  });
  return { ...last, type: packType, at, body: `[${entries.join(',')}]` };
}

/**
 * The rows to write for one transaction's event rows (in the order appended): each session's events other than
 * token deltas packed, a pack closed at `packSize` events or before it would span `coalesceSpan` cursors or
 * `packTimeSpan` ms; a pack of one is an ordinary row.
 */
export function packEventRows(rows: readonly EventRowParams[]): EventRowParams[] {
  const packed: EventRowParams[] = [];
  const open = new Map<string, OpenPack>();
  const close = (pack: OpenPack): void => {
    packed.push(pack.rows.length === 1 ? (pack.rows[0] as EventRowParams) : packRow(pack.rows));
  };
  for (const row of rows) {
    if (row.type === 'assistant.delta' || row.type === packType) {
      packed.push(row);
      continue;
    }
    const pack = open.get(row.session_key);
    if (pack !== undefined && fits(pack, row)) {
      pack.rows.push(row);
      pack.earliest = Math.min(pack.earliest, row.at);
      pack.latest = Math.max(pack.latest, row.at);
      continue;
    }
    if (pack !== undefined) close(pack);
    open.set(row.session_key, { rows: [row], earliest: row.at, latest: row.at });
  }
  for (const pack of open.values()) close(pack);
  return packed;
}

/** The rows to write for one transaction's events (see `packEventRows`). */
export function eventRows(events: readonly RuntimeEvent[]): EventRowParams[] {
  return packEventRows(events.map(eventRow));
}

/** A pack being gathered: its events' rows and the span of their times. */
interface OpenPack {
  readonly rows: EventRowParams[];
  earliest: number;
  latest: number;
}

/** Whether `row` may join `pack`: room left, after its last event, within the cursor and time spans. */
function fits(pack: OpenPack, row: EventRowParams): boolean {
  const { rows } = pack;
  const first = rows[0] as EventRowParams;
  return (
    rows.length < packSize &&
    row.cursor > (rows[rows.length - 1] as EventRowParams).cursor &&
    row.cursor - first.cursor < coalesceSpan &&
    Math.max(pack.latest, row.at) - Math.min(pack.earliest, row.at) <= packTimeSpan
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
    entries = parseBody(row.body);
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

/** How many events a pack row's body holds; a body that does not read as a list counts as one (a corrupt row). */
export function packEntries(body: string): number {
  try {
    const entries = parseBody(body);
    return Array.isArray(entries) ? entries.length : 1;
  } catch {
    return 1;
  }
}
