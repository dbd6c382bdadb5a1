import type { EventOf, RuntimeEvent } from '../../core/index.js';
import { coalesceSpan } from './delta-coalescer.js';

type Delta = EventOf<'assistant.delta'>;

/** One token of a coalesced row, as the delta event it was when emitted (its `at` is the row's). */
interface Token {
  readonly kind: 'token';
  readonly cursor: number;
  readonly seq: number;
  readonly text: string;
  /** The row it was stored in: consecutive tokens of one row are yielded as one event again. */
  readonly row: Delta;
}

/** A recorded delta row with its token marks: three numbers per token (cursor step, seq step, text length). */
function marksOf(event: RuntimeEvent): number[] | undefined {
  if (event.type !== 'assistant.delta' || !('tokens' in event)) return undefined;
  const marks = (event as { tokens?: unknown }).tokens;
  if (!Array.isArray(marks) || marks.length % 3 !== 0) return undefined;
  return marks.every((mark) => Number.isSafeInteger(mark)) ? (marks as number[]) : undefined;
}

/** The event without its row's token marks (what every read hands out). */
function withoutMarks(event: RuntimeEvent): RuntimeEvent {
  if (!('tokens' in event)) return event;
  const { tokens: _tokens, ...rest } = event as Delta & { tokens?: unknown };
  return rest;
}

/** The tokens of a coalesced row, each with the cursor, seq and text it had when emitted. */
function tokensOf(row: Delta, marks: readonly number[]): Token[] {
  const tokens: Token[] = [];
  let cursor = 0;
  let seq = 0;
  let offset = 0;
  for (let index = 0; index < marks.length; index += 3) {
    cursor += marks[index] as number;
    seq += marks[index + 1] as number;
    const length = marks[index + 2] as number;
    tokens.push({ kind: 'token', cursor, seq, text: row.delta.slice(offset, offset + length), row });
    offset += length;
  }
  return tokens;
}

/**
 * The events a read of the rows `rows` hands out for the cursors in `(after, until]`, in cursor order (the events of
 * packs (event-packs.ts) come in their rows' order and are sorted in among the others). A coalesced
 * delta row stands for the tokens it joined (see delta-coalescer.ts): it is cut to the tokens in range, and split
 * where another recorded event falls between its tokens, so the events come back in the order they were emitted,
 * each token's text exactly once, whatever cursor a read starts or stops at. Consecutive tokens of one row come
 * back as one event, with the last one's cursor and seq. At most `limit` events (a page of rows may hold more).
 */
export function eventsWithin(
  rows: readonly RuntimeEvent[],
  {
    after,
    until = Infinity,
    limit,
  }: { readonly after: number; readonly until?: number; readonly limit?: number | undefined },
): RuntimeEvent[] {
  const events = orderedWithin(rows, after, until);
  if (limit !== undefined && events.length > limit) events.length = limit;
  return events;
}

function orderedWithin(rows: readonly RuntimeEvent[], after: number, until: number): RuntimeEvent[] {
  const items: (RuntimeEvent | Token)[] = [];
  let split = false;
  let ordered = true;
  for (const row of rows) {
    const marks = marksOf(row);
    if (marks === undefined) {
      if (row.cursor <= after || row.cursor > until) continue;
      ordered &&= items.length === 0 || (items[items.length - 1] as RuntimeEvent).cursor < row.cursor;
      items.push(withoutMarks(row));
      continue;
    }
    split = true;
    for (const token of tokensOf(row as Delta, marks)) {
      if (token.cursor > after && token.cursor <= until) items.push(token);
    }
  }
  if (!split && ordered) return items as RuntimeEvent[];
  items.sort((left, right) => left.cursor - right.cursor);
  return split ? joinTokens(items) : (items as RuntimeEvent[]);
}

function isToken(item: RuntimeEvent | Token): item is Token {
  return 'kind' in item && item.kind === 'token';
}

/** Consecutive tokens of one row as one delta event; other events as they are. */
function joinTokens(items: readonly (RuntimeEvent | Token)[]): RuntimeEvent[] {
  const events: RuntimeEvent[] = [];
  let open: { row: Delta; last: Token; text: string } | undefined;
  const close = (): void => {
    if (open === undefined) return;
    const { row, last, text } = open;
    const { tokens: _tokens, ...envelope } = row as Delta & { tokens?: unknown };
    events.push({ ...envelope, cursor: last.cursor, seq: last.seq, delta: text });
    open = undefined;
  };
  for (const item of items) {
    if (!isToken(item)) {
      close();
      events.push(item);
      continue;
    }
    if (open !== undefined && open.row !== item.row) close();
    if (open === undefined) open = { row: item.row, last: item, text: item.text };
    else open = { row: open.row, last: item, text: open.text + item.text };
  }
  close();
  return events;
}

/** What a page read from the log covers: the rows it read, and the cursors it may hand out events for. */
export interface PageBounds {
  /** Read events past this cursor. */
  readonly after: number;
  /** Hand out nothing beyond this cursor. */
  readonly until?: number;
  /** How many rows the page read at most. */
  readonly limit?: number;
}

/** What a page read of the log got: how many rows, and the cursor of the last one (undefined: none). */
export interface PageRead {
  readonly rows: number;
  readonly last: number | undefined;
}

/**
 * After reading a page of rows (`cursor > after`, in cursor order): the cursors its events may be handed out for,
 * and the further rows a read must add to hold every event in them: a row stored beyond the page may hold tokens or
 * packed events within it (rows of concurrent runs and sessions overlap, by less than `coalesceSpan`). Undefined
 * `extra`: nothing to add.
 */
export function pageCoverage(
  bounds: PageBounds,
  read: PageRead,
): { readonly until: number; readonly extra?: { readonly after: number; readonly until: number } } {
  const full = bounds.limit !== undefined && read.rows >= bounds.limit;
  const lastRow = read.last ?? bounds.after;
  const until = Math.min(full ? lastRow : Infinity, bounds.until ?? Infinity);
  // A short page read every row past `after`: nothing beyond it is missing.
  if (!full || until + coalesceSpan <= lastRow) return { until };
  return { until, extra: { after: lastRow, until: until + coalesceSpan } };
}
