import { RuntimeError, type RuntimeEvent } from '../../core/index.js';
import type { InboxRecord } from '../contract/inbox-store.js';
import type { OpenRunStatus, RunClose, RunProgress, RunRecord } from '../contract/run-store.js';
import type { SessionRecord } from '../contract/session-store.js';
import type { TurnRecord } from '../contract/transcript-store.js';
import { eventBody, turnExtra } from './rows.js';

/** Statement parameters for each record (records -> rows; sql/rows.ts goes the other way). */

export function sessionRow(record: SessionRecord) {
  return {
    session_key: record.sessionKey,
    override: JSON.stringify(record.override),
    snapshot: record.snapshot === undefined ? null : JSON.stringify(record.snapshot),
    epoch: record.epoch,
    last_seq: record.lastSeq,
    updated_at: record.updatedAt,
    tool_policy: record.toolPolicy === undefined ? null : JSON.stringify(record.toolPolicy),
  };
}

export function inboxRow(record: InboxRecord) {
  return {
    session_key: record.sessionKey,
    ord: record.order,
    message_id: record.messageId,
    text: record.text,
    mode: record.mode,
    status: record.status,
    accepted_at: record.acceptedAt,
    sender_id: record.senderId ?? null,
    sender_name: record.senderName ?? null,
    sender_role: record.senderRole ?? null,
    channel: record.channel ?? null,
    thread: record.thread ?? null,
    run_id: record.runId ?? null,
    summary: record.summary ?? null,
    parts: record.parts === undefined ? null : JSON.stringify(record.parts),
  };
}

/** The inbox table's columns, in the order of `inboxRow`'s keys (multi-row inserts list them once). */
export const inboxColumns = [
  'session_key',
  'ord',
  'message_id',
  'text',
  'mode',
  'status',
  'accepted_at',
  'sender_id',
  'sender_name',
  'sender_role',
  'channel',
  'thread',
  'run_id',
  'summary',
  'parts',
] as const satisfies readonly (keyof ReturnType<typeof inboxRow>)[];

/** The runs table's columns an open writes, in the order of `openRunRow`'s keys. */
export const openRunColumns = [
  'run_id',
  'session_key',
  'status',
  'message_ids',
  'provider',
  'model',
  'started_at',
  'ended_at',
  'error_code',
  'error_message',
  'input_tokens',
  'output_tokens',
  'cost',
  'text',
  'parent_run_id',
  'parent_call_id',
] as const satisfies readonly (keyof ReturnType<typeof openRunRow>)[];

export function openRunRow(record: RunRecord) {
  return {
    run_id: record.runId,
    session_key: record.sessionKey,
    status: record.status,
    message_ids: JSON.stringify(record.messageIds),
    provider: record.provider,
    model: record.model,
    started_at: record.startedAt,
    ended_at: record.endedAt ?? null,
    error_code: record.error?.code ?? null,
    error_message: record.error?.message ?? null,
    input_tokens: record.usage.inputTokens,
    output_tokens: record.usage.outputTokens,
    cost: record.cost ?? null,
    text: record.text,
    parent_run_id: record.parentRunId ?? null,
    parent_call_id: record.parentCallId ?? null,
  };
}

/** A close's columns: `run_id` first, then the ones it sets, in the order of `runCloseRow`'s keys. */
export const runCloseColumns = [
  'run_id',
  'status',
  'ended_at',
  'text',
  'input_tokens',
  'output_tokens',
  'cost',
  'error_code',
  'error_message',
] as const satisfies readonly (keyof ReturnType<typeof runCloseRow>)[];

export function runCloseRow(runId: string, close: RunClose) {
  return {
    run_id: runId,
    status: close.status,
    ended_at: close.endedAt,
    text: close.text,
    input_tokens: close.usage.inputTokens,
    output_tokens: close.usage.outputTokens,
    cost: close.cost ?? null,
    error_code: close.error?.code ?? null,
    error_message: close.error?.message ?? null,
  };
}

/**
 * The error of the first of a close's writes `after` that failed (`RunCloseOptions.after`), by `failureOf`: the
 * close is then not written and fails with it.
 */
export function failedBefore(
  after: readonly Promise<void>[] | undefined,
  failureOf: (write: Promise<void>) => Error | undefined,
): Error | undefined {
  for (const write of after ?? []) {
    const failure = failureOf(write);
    if (failure !== undefined) return failure;
  }
  return undefined;
}

/**
 * The runs whose close was refused because a write it was tied to failed (`failedBefore`): their `run.ended`,
 * appended in the same stretch, is refused with it (its append fails alone), so that no run is announced ended
 * with an end the ledger does not hold. Each entry is taken by that `run.ended`.
 */
export type RefusedCloses = Set<string>;

/** The error of a `run.ended` whose run's close was refused (see `RefusedCloses`), or undefined: then it is taken. */
export function refusedEnd(event: RuntimeEvent, refused: RefusedCloses): RuntimeError | undefined {
  if (event.type !== 'run.ended' || event.runId === undefined || !refused.delete(event.runId))
    return undefined;
  // Refused like the close (not a storage fault: the ledger goes on taking writes).
  return new RuntimeError(
    'invalid_input',
    `the end of run "${event.runId}" was refused with its close: a write the close was tied to failed`,
  );
}

/** A status change, with the progress to store (NULL columns keep what is stored). */
export function runStatusRow(runId: string, status: OpenRunStatus, progress: RunProgress | undefined) {
  return {
    run_id: runId,
    status,
    text: progress?.text ?? null,
    input_tokens: progress?.usage.inputTokens ?? null,
    output_tokens: progress?.usage.outputTokens ?? null,
    cost: progress?.cost ?? null,
  };
}

export function turnRow(record: TurnRecord) {
  return {
    session_key: record.sessionKey,
    run_id: record.runId,
    idx: record.index,
    role: record.role,
    content: record.content,
    at: record.at,
    extra: turnExtra(record),
  };
}

export function eventRow(event: RuntimeEvent) {
  return {
    cursor: event.cursor,
    session_key: event.sessionKey,
    seq: event.seq,
    type: event.type,
    run_id: event.runId ?? null,
    at: event.at,
    body: eventBody(event),
  };
}
