import { pieceCodec } from '../../core/index.js';
import type { SessionRecord } from '../contract/session-store.js';

/**
 * A session's record kept as one string, so that a hibernated session costs the memory ledger one string and a map
 * entry instead of an object, its override object and a snapshot string (0.66 KB per hibernated session before).
 *
 * The fields go one per line (JSON text never holds a raw line feed): epoch, lastSeq, updatedAt, the override's
 * JSON, the tool policy's JSON and the snapshot's JSON (empty when undefined). The JSON is shortened by replacing
 * the session's own quoted key and the frequent pieces of a session snapshot below with one control character
 * each: JSON.stringify escapes every character below U+0020, so none of them can occur in its output and the
 * replacement is undone exactly whatever the JSON holds (a snapshot of another shape is only less shortened).
 */
const pieces: readonly string[] = [
  '{"status":"active","value":{"idle":"empty"},"historyValue":{},"context":{"sessionKey":',
  ',"queue":[],"dropped":[],"droppedOmitted":0,"seen":[',
  '],"nextOrder":',
  ',"lastEnqueuedAt":',
  ',"runEndedAt":',
  ',"drainAt":null,"interruptUntil":null,"preferredProfile":null,"run":null,"pause":null,"plans":[]},"children":{}}',
  '{"status":"active","value":',
  '"historyValue":{}',
  '"context":{"sessionKey":',
  ',"queue":[',
  '"dropped":[]',
  '"droppedOmitted":0',
  ',"drainAt":',
  ',"interruptUntil":null',
  ',"preferredProfile":null',
  '"run":null',
  '"pause":null',
  '"plans":[]',
  '"children":{}',
  '"messageId":',
  '"enqueuedAt":',
  '"debounceMs":',
  '"maxWaitMs":',
  '"mode":"followup"',
  '"mode":"collect"',
  '"text":',
  'null',
];

/** The code standing for the session's own quoted key; the pieces take the codes after it. */
const keyCode = '\u0001';
const codec = pieceCodec(pieces, 1);

function shorten(json: string, quotedKey: string): string {
  return codec.shorten(json.split(quotedKey).join(keyCode));
}

function expand(text: string, quotedKey: string): string {
  return codec.expand(text).split(keyCode).join(quotedKey);
}

/** The record as the one string the memory ledger keeps. */
export function compactSession(record: SessionRecord): string {
  const quotedKey = JSON.stringify(record.sessionKey);
  const json = (value: unknown): string =>
    value === undefined ? '' : shorten(JSON.stringify(value), quotedKey);
  return [
    record.epoch,
    record.lastSeq,
    record.updatedAt,
    json(record.override),
    json(record.toolPolicy),
    json(record.snapshot),
  ].join('\n');
}

/** The record back from what `compactSession` made of it (fresh objects on every call). */
export function expandSession(sessionKey: string, compact: string): SessionRecord {
  const quotedKey = JSON.stringify(sessionKey);
  const [epoch, lastSeq, updatedAt, override, toolPolicy, snapshot] = compact.split('\n');
  const parse = (text: string | undefined): unknown =>
    text === undefined || text === '' ? undefined : (JSON.parse(expand(text, quotedKey)) as unknown);
  const policy = parse(toolPolicy);
  return {
    sessionKey,
    override: (parse(override) ?? {}) as Readonly<Record<string, unknown>>,
    snapshot: parse(snapshot),
    epoch: Number(epoch),
    lastSeq: Number(lastSeq),
    updatedAt: Number(updatedAt),
    ...(policy === undefined ? {} : { toolPolicy: policy }),
  };
}

/** When the record was last put, read from its string without expanding it. */
export function updatedAtOf(compact: string): number {
  const first = compact.indexOf('\n');
  const second = compact.indexOf('\n', first + 1);
  return Number(compact.slice(second + 1, compact.indexOf('\n', second + 1)));
}
