import { pieceCodec } from '../../core/index.js';

/**
 * The SQLite event log stores its bodies shortened (about 300 bytes per message fewer, issue 27): the JSON keys and
 * pack entry heads of the events every message records are one control character each (core/piece-codec.ts). Both
 * SQL ledgers read bodies through `expandBody`, which leaves plain JSON (a Postgres row, an older SQLite file) as
 * it is. The list is part of the stored format: never reordered or changed. It takes all 30 codes; a new piece
 * needs a new format (a second list, chosen by a marker, and a migration that makes older builds refuse the file).
 */
const bodyPieces: readonly string[] = [
  // message.received
  '{"messageId":',
  ',"text":',
  ',"mode":"',
  ',"disposition":"',
  ',"channel":',
  // assistant.delta (a coalesced row)
  '{"delta":',
  ',"tokens":[',
  // pack entries: the type, then the body's first key
  '"run.started",{"messageIds":["',
  '"assistant.block",{"index":',
  '"cost.updated",{"provider":',
  '"assistant.final",{"text":',
  '"tool.called",{"toolCallId":',
  '"tool.succeeded",{"toolCallId":',
  // cost.updated, run.started
  ',"provider":',
  ',"model":',
  '"inputTokens":',
  ',"outputTokens":',
  ',"cost":',
  ',"cumulativeCost":',
  ',"priced":false',
  ',"startedAt":',
  ',"finishReason":"',
  // run.ended
  '{"status":"completed","text":',
  '{"status":"',
  ',"usage":{',
  '},"durationMs":',
  // tools, queues
  ',"tool":',
  ',"args":',
  ',"output":',
  ',"position":',
];

const codec = pieceCodec(bodyPieces);

/** A body (an event's or a pack's JSON) as the SQLite ledger stores it. */
export const shortenBody = (json: string): string => codec.shorten(json);

/** A stored body back as JSON (plain JSON as it is). */
export const expandBody = (stored: string): string => codec.expand(stored);

/** A stored body parsed (shortened or plain JSON); throws as JSON.parse does. */
export const parseBody = (stored: string): unknown => JSON.parse(expandBody(stored)) as unknown;
