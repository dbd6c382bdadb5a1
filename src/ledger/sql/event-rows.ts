import type { RuntimeError } from '../../core/index.js';
import { eventTypes, runtimeEventSchema, type EventOf, type RuntimeEvent } from '../../core/index.js';
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
    body = JSON.parse(row.body);
  } catch {
    return 'body is not valid JSON';
  }
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
  const result = eventOf(row);
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
