import { approvalDecisions, approvalMemories } from '../../core/index.js';
import { errorCodes, type ErrorCode } from '../../core/index.js';
import { corrupt, optional, parseJson } from './rows.js';
import {
  compensationStatuses,
  type CompensationRecord,
  type CompensationUpdate,
} from '../contract/compensation-store.js';
import {
  rememberOf,
  toolCallKinds,
  toolCallStatuses,
  type ApprovalDecision,
  type ToolCallKey,
  type ToolCallRecord,
  type ToolCallResult,
  type ToolCallUpdate,
} from '../contract/tool-call-store.js';

/** Raw rows of `tool_calls` and `compensations`, as better-sqlite3 returns them. */
export interface ToolCallRow {
  run_id: string;
  turn: number;
  position: number;
  session_key: string;
  tool_call_id: string;
  tool: string;
  args: string | null;
  kind: string;
  status: string;
  decision: string | null;
  remember: string | null;
  result: string | null;
  requested_at: number;
  resolved_at: number | null;
}
export interface CompensationRow {
  run_id: string;
  seq: number;
  session_key: string;
  tool_call_id: string;
  tool: string;
  args: string | null;
  result: string | null;
  status: string;
  error_code: string | null;
  error_message: string | null;
  recorded_at: number;
  undone_at: number | null;
}

const knownKinds = new Set<string>(toolCallKinds);
const knownCallStatuses = new Set<string>(toolCallStatuses);
const knownCompensationStatuses = new Set<string>(compensationStatuses);
const knownChoices = new Set<string>(approvalDecisions);
const knownMemories = new Set<string>(approvalMemories);
const knownErrorCodes = new Set<string>(errorCodes);

/** JSON text of a value that may be absent (`undefined` has no JSON: it is stored as NULL). */
const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

export function toolCallRow(record: ToolCallRecord) {
  return {
    run_id: record.runId,
    turn: record.turn,
    position: record.position,
    session_key: record.sessionKey,
    tool_call_id: record.toolCallId,
    tool: record.tool,
    args: json(record.args),
    kind: record.kind,
    status: record.status,
    decision: json(record.decision),
    remember: rememberOf(record.decision) ?? null,
    result: json(record.result),
    requested_at: record.requestedAt,
    resolved_at: record.resolvedAt ?? null,
  };
}

/** Parameters of `updateToolCall`; NULL means "keep the stored value" (see the statement). */
export function toolCallUpdateRow(key: ToolCallKey, update: ToolCallUpdate) {
  return {
    run_id: key.runId,
    turn: key.turn,
    position: key.position,
    status: update.status,
    decision: json(update.decision),
    remember: rememberOf(update.decision) ?? null,
    result: json(update.result),
    resolved_at: update.resolvedAt ?? null,
    kind: update.kind ?? null,
    requested_at: update.requestedAt ?? null,
  };
}

function toDecision(name: string, text: string): ApprovalDecision {
  const decision = parseJson('tool_calls', name, 'decision', text) as Partial<ApprovalDecision> | null;
  if (typeof decision !== 'object' || decision === null || !knownChoices.has(String(decision.decision))) {
    throw corrupt('tool_calls', name, 'decision is not an approval decision');
  }
  if (decision.remember !== undefined && !knownMemories.has(decision.remember)) {
    throw corrupt('tool_calls', name, `unknown remember "${String(decision.remember)}"`);
  }
  return decision as ApprovalDecision;
}

function toResult(name: string, text: string): ToolCallResult {
  const result = parseJson('tool_calls', name, 'result', text) as Partial<ToolCallResult> | null;
  if (typeof result?.content !== 'string' || typeof result.isError !== 'boolean') {
    throw corrupt('tool_calls', name, 'result is not a tool result');
  }
  return result as ToolCallResult;
}

export function toToolCallRecord(row: ToolCallRow): ToolCallRecord {
  const name = `("${row.run_id}", ${row.turn}, ${row.position})`;
  if (!knownKinds.has(row.kind)) throw corrupt('tool_calls', name, `unknown kind "${row.kind}"`);
  if (!knownCallStatuses.has(row.status)) throw corrupt('tool_calls', name, `unknown status "${row.status}"`);
  return {
    sessionKey: row.session_key,
    runId: row.run_id,
    turn: row.turn,
    position: row.position,
    toolCallId: row.tool_call_id,
    tool: row.tool,
    args: row.args === null ? undefined : parseJson('tool_calls', name, 'args', row.args),
    kind: row.kind as ToolCallRecord['kind'],
    status: row.status as ToolCallRecord['status'],
    ...(row.decision === null ? {} : { decision: toDecision(name, row.decision) }),
    ...(row.result === null ? {} : { result: toResult(name, row.result) }),
    requestedAt: row.requested_at,
    ...optional('resolvedAt', row.resolved_at),
  };
}

export function compensationRow(record: CompensationRecord) {
  return {
    run_id: record.runId,
    seq: record.seq,
    session_key: record.sessionKey,
    tool_call_id: record.toolCallId,
    tool: record.tool,
    args: json(record.args),
    result: json(record.result),
    status: record.status,
    error_code: record.error?.code ?? null,
    error_message: record.error?.message ?? null,
    recorded_at: record.recordedAt,
    undone_at: record.undoneAt ?? null,
  };
}

/** Parameters of `updateCompensation`: an attempt replaces the error of the one before (none when it worked). */
export function compensationUpdateRow(runId: string, seq: number, update: CompensationUpdate) {
  return {
    run_id: runId,
    seq,
    status: update.status,
    error_code: update.error?.code ?? null,
    error_message: update.error?.message ?? null,
    undone_at: update.undoneAt,
  };
}

export function toCompensationRecord(row: CompensationRow): CompensationRecord {
  const name = `("${row.run_id}", ${row.seq})`;
  if (!knownCompensationStatuses.has(row.status)) {
    throw corrupt('compensations', name, `unknown status "${row.status}"`);
  }
  if (row.error_code !== null && !knownErrorCodes.has(row.error_code)) {
    throw corrupt('compensations', name, `unknown error code "${row.error_code}"`);
  }
  return {
    sessionKey: row.session_key,
    runId: row.run_id,
    seq: row.seq,
    toolCallId: row.tool_call_id,
    tool: row.tool,
    args: row.args === null ? undefined : parseJson('compensations', name, 'args', row.args),
    result: row.result === null ? undefined : parseJson('compensations', name, 'result', row.result),
    status: row.status as CompensationRecord['status'],
    ...(row.error_code === null
      ? {}
      : { error: { code: row.error_code as ErrorCode, message: row.error_message ?? '' } }),
    recordedAt: row.recorded_at,
    ...optional('undoneAt', row.undone_at),
  };
}
