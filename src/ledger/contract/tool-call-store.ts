import type { ApprovalChoice, ApprovalMemory } from '../../core/index.js';

/**
 * What a call of a paused tool batch is: `ran` already has its result (a sibling that must never run twice),
 * `approval` waits for an operator, `deferred` waits for a result supplied from outside, `in_doubt` started before
 * a crash with no recorded outcome and waits for an operator (approve: run again, reject, or supply the outcome).
 */
export const toolCallKinds = ['ran', 'approval', 'deferred', 'in_doubt'] as const;
/** The kind of a recorded tool call. */
export type ToolCallKind = (typeof toolCallKinds)[number];

/**
 * Where a recorded call stands: `pending` until decided or supplied; `approved` / `rejected` by an operator;
 * `supplied` with a result from outside; `settled` once its result went back to the model; `cancelled` when the
 * run ended without resuming.
 */
export const toolCallStatuses = [
  'pending',
  'approved',
  'rejected',
  'supplied',
  'settled',
  'cancelled',
] as const;
/** The status of a recorded tool call. */
export type ToolCallStatus = (typeof toolCallStatuses)[number];

/** An operator's decision on one call. `edit` runs it with `args` instead of the model's arguments. */
export interface ApprovalDecision {
  readonly decision: ApprovalChoice;
  readonly args?: unknown;
  /** A note fed back to the model with a rejection. */
  readonly message?: string;
  readonly remember?: ApprovalMemory;
}

/** A tool result as it goes back to the model. */
export interface ToolCallResult {
  readonly content: string;
  readonly isError: boolean;
}

/**
 * One call of a tool batch that paused its run. Every call of the batch is recorded, so a resume (even after a
 * restart) rebuilds the batch: results of `ran` calls, decisions and supplied results of the others.
 * Identified by `(runId, turn, position)`: model-made call ids are not unique across runs or sessions.
 */
export interface ToolCallRecord {
  readonly sessionKey: string;
  readonly runId: string;
  /** The tool turn of the run the batch belongs to (1 for the first model turn that asked for tools). */
  readonly turn: number;
  /** The call's index in its model turn. */
  readonly position: number;
  readonly toolCallId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly kind: ToolCallKind;
  readonly status: ToolCallStatus;
  readonly decision?: ApprovalDecision;
  readonly result?: ToolCallResult;
  readonly requestedAt: number;
  readonly resolvedAt?: number;
}

/** A change to a recorded call. Fields left out keep their value. */
export interface ToolCallUpdate {
  readonly status: ToolCallStatus;
  /** A call a crash left in doubt waits again as a new request: `in_doubt`, requested at the new pause. */
  readonly kind?: ToolCallKind;
  readonly requestedAt?: number;
  readonly decision?: ApprovalDecision;
  readonly result?: ToolCallResult;
  readonly resolvedAt?: number;
}

/** The key of a recorded call. */
export interface ToolCallKey {
  readonly runId: string;
  readonly turn: number;
  readonly position: number;
}

/** Tool names approved with `remember`, by how long the approval lasts. */
export interface RememberedTools {
  /** Approved with `remember: 'run'` in this run. */
  readonly run: readonly string[];
  /** Approved with `remember: 'session'` in any run of the session. */
  readonly session: readonly string[];
}

/** Where the calls of paused tool batches are kept, so a resume (even after a restart) rebuilds the batch. */
export interface ToolCallStore {
  /** Record the calls of a batch that paused; a key already recorded is refused (`invalid_input`). */
  putToolCalls(records: readonly ToolCallRecord[]): Promise<void>;
  /** Change a recorded call; `not_found` when there is none with that key. */
  updateToolCall(key: ToolCallKey, update: ToolCallUpdate): Promise<void>;
  /** A run's recorded calls, by turn then position. */
  listToolCalls(runId: string): Promise<ToolCallRecord[]>;
  /** Tools approved with `remember`: `run` ones of this run, `session` ones of any run of the session. */
  rememberedTools(sessionKey: string, runId: string): Promise<RememberedTools>;
}

/**
 * How long a decision's approval lasts. A rejection is never remembered, whatever it says, so that
 * `rememberedTools` cannot turn a refusal into a standing approval.
 */
export function rememberOf(decision: ApprovalDecision | undefined): ApprovalMemory | undefined {
  return decision?.decision === 'reject' ? undefined : decision?.remember;
}
