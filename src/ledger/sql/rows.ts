import { RuntimeError } from '../../core/index.js';
import { errorCodes } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import { inboxStatuses } from '../../core/index.js';
import { queueModes } from '../../core/index.js';
import { queueSettingsSchema } from '../../policies/index.js';
import { recordedRunStatuses } from '../../core/index.js';
import type { InboxRecord } from '../contract/inbox-store.js';
import type { RunRecord } from '../contract/run-store.js';
import type { SessionRecord } from '../contract/session-store.js';
import type { TurnRecord } from '../contract/transcript-store.js';

/** Raw rows as better-sqlite3 returns them. */
export interface SessionRow {
  session_key: string;
  override: string;
  snapshot: string | null;
  epoch: number;
  last_seq: number;
  updated_at: number;
  tool_policy: string | null;
}
export interface InboxRow {
  session_key: string;
  ord: number;
  message_id: string;
  text: string;
  mode: string;
  status: string;
  accepted_at: number;
  sender_id: string | null;
  /** Absent in a row of a schema before the sender's name and role were kept. */
  sender_name?: string | null;
  sender_role?: string | null;
  channel: string | null;
  thread: string | null;
  run_id: string | null;
  summary: string | null;
  parts?: string | null;
}
export interface RunRow {
  run_id: string;
  session_key: string;
  status: string;
  message_ids: string;
  provider: string;
  model: string;
  started_at: number;
  ended_at: number | null;
  error_code: string | null;
  error_message: string | null;
  input_tokens: number;
  output_tokens: number;
  cost: number | null;
  text: string;
  parent_run_id: string | null;
  parent_call_id: string | null;
}
export interface TurnRow {
  /** The row's id (a read of `SELECT *` has it). */
  id?: number;
  session_key: string;
  run_id: string;
  idx: number;
  role: string;
  content: string;
  at: number;
  extra: string | null;
}
export interface EventRow {
  cursor: number;
  session_key: string;
  seq: number;
  type: string;
  run_id: string | null;
  at: number;
  body: string;
}

/** True when `value` is one of `values`: a row's column checked against its closed vocabulary. */
function isOneOf<T extends string>(values: readonly T[]): (value: string) => value is T {
  const known = new Set<string>(values);
  return (value): value is T => known.has(value);
}

const isInboxStatus = isOneOf(inboxStatuses);
const isQueueMode = isOneOf(queueModes);
const isRunStatus = isOneOf(recordedRunStatuses);
const isErrorCode = isOneOf(errorCodes);

/**
 * A row that cannot be read: `ledger_corrupt`, naming the table and the row (and, in `details.sessionKey`, the
 * session it belongs to, so the report reaches that session's events).
 */
export function corrupt(table: string, row: string, problem: string, sessionKey?: string): RuntimeError {
  return new RuntimeError('ledger_corrupt', `${table} row ${row}: ${problem}`, {
    details: { table, row, ...(sessionKey === undefined ? {} : { sessionKey }) },
  });
}

/** Map a constraint failure (a duplicate key) to `invalid_input`; other errors pass through. */
export function constraint(what: string, work: () => void): () => void {
  return () => {
    try {
      work();
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT') === true) {
        throw new RuntimeError('invalid_input', `${what} is already recorded`, { cause: error });
      }
      throw error;
    }
  };
}

export function parseJson(
  table: string,
  row: string,
  column: string,
  text: string,
  sessionKey?: string,
): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw corrupt(table, row, `${column} is not valid JSON`, sessionKey);
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function optional<K extends string, V>(key: K, value: V | null): { [P in K]?: V } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: V };
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  const key = row.session_key;
  const name = `"${key}"`;
  const override = parseJson('sessions', name, 'override', row.override, key);
  // A stored override is applied to every new message of the session: one replay would reject is refused here.
  if (!queueSettingsSchema.safeParse(override).success) {
    throw corrupt('sessions', name, 'override is not a valid queue settings override', key);
  }
  const snapshot =
    row.snapshot === null ? undefined : parseJson('sessions', name, 'snapshot', row.snapshot, key);
  if (snapshot !== undefined && !isPlainObject(snapshot)) {
    throw corrupt('sessions', name, 'snapshot is not an object', key);
  }
  if (typeof row.epoch !== 'number' || typeof row.last_seq !== 'number') {
    throw corrupt('sessions', name, 'epoch or last_seq is not a number', key);
  }
  return {
    sessionKey: key,
    override: override as SessionRecord['override'],
    snapshot,
    epoch: row.epoch,
    lastSeq: row.last_seq,
    updatedAt: row.updated_at,
    ...(row.tool_policy === null
      ? {}
      : { toolPolicy: parseJson('sessions', name, 'tool_policy', row.tool_policy, key) }),
  };
}

/** How a corruption report names an inbox row. */
export const inboxRowName = (row: { session_key: string; ord: number }): string =>
  `("${row.session_key}", ${row.ord})`;

export function toInboxRecord(row: InboxRow): InboxRecord {
  const { status, mode } = row;
  if (!isInboxStatus(status)) {
    throw corrupt('inbox', inboxRowName(row), `unknown status "${status}"`, row.session_key);
  }
  if (!isQueueMode(mode))
    throw corrupt('inbox', inboxRowName(row), `unknown mode "${mode}"`, row.session_key);
  return {
    sessionKey: row.session_key,
    messageId: row.message_id,
    order: row.ord,
    text: row.text,
    mode,
    status,
    acceptedAt: row.accepted_at,
    ...optional('senderId', row.sender_id),
    ...optional('senderName', row.sender_name ?? null),
    ...optional('senderRole', row.sender_role ?? null),
    ...optional('channel', row.channel),
    ...optional('thread', row.thread),
    ...optional('runId', row.run_id),
    ...optional('summary', row.summary),
    ...inboxParts(row),
  };
}

/** The stored parts of an inbox row (a JSON list of references), when it has any. */
function inboxParts(row: InboxRow): Pick<InboxRecord, 'parts'> {
  if (row.parts === null || row.parts === undefined) return {};
  const parts = parseJson('inbox', inboxRowName(row), 'parts', row.parts, row.session_key);
  if (!Array.isArray(parts))
    throw corrupt('inbox', inboxRowName(row), 'parts is not a list', row.session_key);
  return { parts: parts as NonNullable<InboxRecord['parts']> };
}

export function toRunRecord(row: RunRow): RunRecord {
  const name = `"${row.run_id}"`;
  const key = row.session_key;
  const { status, error_code: errorCode } = row;
  if (!isRunStatus(status)) throw corrupt('runs', name, `unknown status "${status}"`, key);
  if (errorCode !== null && !isErrorCode(errorCode)) {
    throw corrupt('runs', name, `unknown error code "${errorCode}"`, key);
  }
  const messageIds = parseJson('runs', name, 'message_ids', row.message_ids, key);
  if (!Array.isArray(messageIds) || !messageIds.every((id) => typeof id === 'string')) {
    throw corrupt('runs', name, 'message_ids is not a list of message ids', key);
  }
  return {
    runId: row.run_id,
    sessionKey: row.session_key,
    status,
    messageIds,
    provider: row.provider,
    model: row.model,
    startedAt: row.started_at,
    ...optional('endedAt', row.ended_at),
    ...(errorCode === null ? {} : { error: { code: errorCode, message: row.error_message ?? '' } }),
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
    ...optional('cost', row.cost),
    text: row.text,
    ...optional('parentRunId', row.parent_run_id),
    ...optional('parentCallId', row.parent_call_id),
  };
}

/** The columns of a turn that only some turns have, kept as one JSON object. */
export function turnExtra(turn: TurnRecord): string | null {
  const { toolCalls, toolCallId, tool, isError, messageIds, attachments } = turn;
  const extra = { toolCalls, toolCallId, tool, isError, messageIds, attachments };
  return Object.values(extra).every((value) => value === undefined) ? null : JSON.stringify(extra);
}

/** The checks of a turn's `extra` column: each key it may hold and the type its value must have. */
const turnExtraChecks: Record<string, (value: unknown) => boolean> = {
  toolCalls: Array.isArray,
  toolCallId: (value) => typeof value === 'string',
  tool: (value) => typeof value === 'string',
  isError: (value) => typeof value === 'boolean',
  messageIds: (value) => Array.isArray(value) && value.every((id) => typeof id === 'string'),
  attachments: Array.isArray,
};

/** A turn's `extra` column read and checked: a plain object of the known keys, each of its type. */
function turnExtraOf(row: TurnRow, name: string): Partial<TurnRecord> {
  if (row.extra === null) return {};
  const extra = parseJson('turns', name, 'extra', row.extra, row.session_key);
  if (!isPlainObject(extra)) throw corrupt('turns', name, 'extra is not an object', row.session_key);
  for (const [key, value] of Object.entries(extra)) {
    const check = turnExtraChecks[key];
    if (check === undefined)
      throw corrupt('turns', name, `extra has an unknown key "${key}"`, row.session_key);
    if (value !== undefined && !check(value)) {
      throw corrupt('turns', name, `extra.${key} has the wrong type`, row.session_key);
    }
  }
  return extra;
}

/** How a corruption report names a turn row: its id when the row has one, and its run and index. */
const turnRowName = (row: TurnRow): string =>
  `${row.id === undefined ? '' : `${row.id} `}(run "${row.run_id}" #${row.idx})`;

export function toTurnRecord(row: TurnRow): TurnRecord {
  const name = turnRowName(row);
  if (row.role !== 'user' && row.role !== 'assistant' && row.role !== 'tool') {
    throw corrupt('turns', name, `unknown role "${row.role}"`, row.session_key);
  }
  return {
    sessionKey: row.session_key,
    runId: row.run_id,
    index: row.idx,
    role: row.role,
    content: row.content,
    at: row.at,
    ...turnExtraOf(row, name),
  };
}

/**
 * The body column: the event without its envelope fields, and without a block id the reader derives (`<runId>:<index>`,
 * as the runtime makes it), which would repeat the run id in every block row.
 */
export function eventBody(event: RuntimeEvent): string {
  const { type: _type, sessionKey: _key, seq: _seq, cursor: _cursor, at: _at, runId: _run, ...body } = event;
  const block = event.type === 'assistant.block' ? event : undefined;
  if (block?.runId !== undefined && block.blockId === `${block.runId}:${block.index}`) {
    const { blockId: _derived, ...rest } = body as typeof body & { blockId: string };
    return JSON.stringify(rest);
  }
  return JSON.stringify(body);
}
