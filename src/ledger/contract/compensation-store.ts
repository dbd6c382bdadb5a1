import type { ErrorInfo } from '../../core/index.js';

/**
 * Where a compensation stands: still to run, started by an undo (recorded before it runs), run, failed (a later
 * undo tries it again), or in doubt: it started and its outcome is unknown (cut off, or found `started` after a
 * crash), so it is never started again without the operator's decision.
 */
export const compensationStatuses = ['pending', 'started', 'done', 'failed', 'in_doubt'] as const;
/** The status of a compensation. */
export type CompensationStatus = (typeof compensationStatuses)[number];

/**
 * The compensation of a tool call that succeeded and has an `undo`: the tool, its arguments and its result, in
 * the order the calls succeeded (`seq`, per run, from 1).
 */
export interface CompensationRecord {
  readonly sessionKey: string;
  readonly runId: string;
  readonly seq: number;
  readonly toolCallId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly result: unknown;
  readonly status: CompensationStatus;
  readonly error?: ErrorInfo;
  readonly recordedAt: number;
  readonly undoneAt?: number;
}

/** What an undo attempt changes on a compensation. */
export interface CompensationUpdate {
  readonly status: CompensationStatus;
  readonly error?: ErrorInfo;
  readonly undoneAt: number;
}

/** Where compensations are kept: what an undo runs, in the order the calls succeeded. */
export interface CompensationStore {
  /** Record the compensation of a call that succeeded; a `(runId, seq)` already recorded is refused. */
  appendCompensation(record: CompensationRecord): Promise<void>;
  /** Change a compensation after an undo attempt; `not_found` when there is none. */
  updateCompensation(runId: string, seq: number, update: CompensationUpdate): Promise<void>;
  /** A run's compensations by `seq`. */
  listCompensations(runId: string): Promise<CompensationRecord[]>;
}
