import type { RuntimeError } from '../../core/index.js';
import { eventTypes, runtimeEventSchema, type EventOf, type RuntimeEvent } from '../../core/index.js';
import { parseBody } from './body-pieces.js';
import { eventRows, packType, unpackRow, type EventRowParams, type PackedRow } from './event-packs.js';
import type { CorruptRowLog } from './corrupt-rows.js';
import { corrupt, optional, type EventRow } from './rows.js';

const knownEventTypes = new Set<string>(eventTypes);
const envelopeKeys = ['type', 'sessionKey', 'seq', 'cursor', 'at', 'runId'] as const;

/** An event row as read: the event, or the `ledger.corrupt` marker standing in its place and the error why. */
export type ReadEvent =
  | { readonly event: RuntimeEvent; readonly problem?: undefined }
  | { readonly event: EventOf<'ledger.corrupt'>; readonly problem: RuntimeError };

/** What is wrong with a row's event, or the event itself. The body is parsed once and validated by its schema. */
function eventOf(row: EventRow): RuntimeEvent | string {
  if (!knownEventTypes.has(row.type)) return `unknown type "${row.type}"`;
  let body: unknown;
  try {
    body = parseBody(row.body);
  } catch {
    return 'body is not valid JSON';
  }
  return parsedEventOf({ ...row, body });
}

/** What is wrong with a row's event (its body parsed, or taken from a pack), or the event itself. */
function parsedEventOf(row: PackedRow): RuntimeEvent | string {
  if (!knownEventTypes.has(row.type)) return `unknown type "${row.type}"`;
  const { body } = row;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body is not an object';
  const payload = body as Record<string, unknown>;
  const repeated = envelopeKeys.find((key) => key in payload);
  if (repeated !== undefined) return `body repeats the envelope field "${repeated}"`;
  // Recorded before blocks had ids: the id is derived the way the runtime derives it (`<runId>:<index>`).
  if (row.type === 'assistant.block' && payload.blockId === undefined && row.run_id !== null) {
    payload.blockId = `${row.run_id}:${String(payload.index)}`;
  }
  const event = {
    type: row.type,
    sessionKey: row.session_key,
    seq: row.seq,
    cursor: row.cursor,
    at: row.at,
    ...optional('runId', row.run_id),
    ...payload,
  };
  const checked = runtimeEventSchema.safeParse(event);
  if (checked.success) return event as RuntimeEvent;
  const issue = checked.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
  return `not a valid ${row.type} event (${where}${issue?.message ?? 'invalid'})`;
}

/**
 * Read an event row. A row that is not a valid event (unknown type, bad JSON, wrong shape) comes back as a
 * `ledger.corrupt` event in its place, with the same cursor, seq and session, so a replay goes on past it.
 */
export function readEventRow(row: EventRow): ReadEvent {
  return readResult(row, eventOf(row));
}

/**
 * Read an event row as the events it stores: one, or a pack's (event-packs.ts), each invalid one as a
 * `ledger.corrupt` event in its place; a pack that cannot be read at all is one marker at the row's cursor.
 */
export function readEventRows(row: EventRow): ReadEvent[] {
  if (row.type !== packType) return [readEventRow(row)];
  const packed = unpackRow(row);
  if (typeof packed === 'string') return [readResult(row, packed)];
  return packed.map((entry) => readResult(entry, parsedEventOf(entry)));
}

/** The event read from `row`, or the marker standing in for it with the problem. */
function readResult(row: Omit<EventRow, 'body'>, result: RuntimeEvent | string): ReadEvent {
  if (typeof result !== 'string') return { event: result };
  const name = `cursor ${row.cursor}`;
  return {
    event: {
      type: 'ledger.corrupt',
      sessionKey: row.session_key,
      seq: row.seq,
      cursor: row.cursor,
      at: row.at,
      ...optional('runId', row.run_id),
      table: 'events',
      row: name,
      message: result,
    },
    problem: corrupt('events', name, result, row.session_key),
  };
}

/** The events of rows read from the log, in the rows' order, each corrupt one reported to `corruptRows`. */
export function parseEventRows(rows: readonly EventRow[], corruptRows: CorruptRowLog): RuntimeEvent[] {
  const events: RuntimeEvent[] = [];
  for (const row of rows) {
    for (const { event, problem } of readEventRows(row)) {
      if (problem !== undefined) corruptRows.report(problem);
      events.push(event);
    }
  }
  return events;
}

/** What pruning events older than a bound leaves of a pack row that also holds newer ones. */
export interface PrunedPack {
  /** The rows of its newer events (one pack, or one ordinary row), to write in its place. */
  readonly kept: EventRowParams[];
  /** How many of its events go, and the highest seq among them (kept aside: a session's seq never goes down). */
  readonly gone: number;
  readonly goneSeq: number;
}

/**
 * Prune the events older than `before` out of a pack row whose newest event is not: undefined when none of its
 * events is older, or when the row does not read back whole (a corrupt row is left as it is).
 */
export function prunePack(row: EventRow, before: number): PrunedPack | undefined {
  const read = readEventRows(row);
  if (read.some(({ problem }) => problem !== undefined)) return undefined;
  const events = read.map(({ event }) => event);
  const gone = events.filter((event) => event.at < before);
  if (gone.length === 0) return undefined;
  return {
    kept: eventRows(events.filter((event) => event.at >= before)),
    gone: gone.length,
    goneSeq: Math.max(...gone.map((event) => event.seq)),
  };
}
