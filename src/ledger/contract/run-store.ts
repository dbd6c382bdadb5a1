import type { ErrorInfo } from '../../core/index.js';
import type { Usage } from '../../core/index.js';
import { pauseStates, type PauseState } from '../../core/index.js';
import type { OpenRunStatus, RecordedRunStatus, RunStatus } from '../../core/index.js';

export type { OpenRunStatus } from '../../core/index.js';

/** A run that paused for an operator's decision or for tool results from outside; it survives a restart. */
export const pausedRunStatuses = pauseStates;
/** Why a run is paused. */
export type PausedRunStatus = PauseState;

/**
 * A run, open (`running` or paused) or ended. `text` is the assistant text so far (the partial output of a
 * crash).
 */
export interface RunRecord {
  readonly runId: string;
  readonly sessionKey: string;
  readonly status: RecordedRunStatus;
  readonly messageIds: readonly string[];
  readonly provider: string;
  readonly model: string;
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly error?: ErrorInfo;
  readonly usage: Usage;
  readonly text: string;
  /** What the run's model calls cost, from the price table (unknown prices count 0). */
  readonly cost?: number;
  /** A subagent's run: the run that spawned it, and that run's `spawn_subagent` call. */
  readonly parentRunId?: string;
  readonly parentCallId?: string;
}

/** Where an open run stands: its assistant text, usage and cost so far. */
export interface RunProgress {
  readonly text: string;
  readonly usage: Usage;
  readonly cost?: number;
}

/** How a run ended. */
export interface RunClose {
  readonly status: RunStatus;
  readonly endedAt: number;
  readonly text: string;
  readonly usage: Usage;
  readonly cost?: number;
  readonly error?: ErrorInfo;
}

/** What a run's close is tied to. */
export interface RunCloseOptions {
  /**
   * The run's earlier writes (promises this ledger returned: its opening, its turns) the close must not commit
   * without. A ledger that answers `closesWith` for them fails the close, unwritten, with the error of one that
   * failed; others may ignore it (their callers wait for these writes first).
   */
  readonly after?: readonly Promise<void>[];
}

/** Where runs are kept: opened, paused and resumed, closed. */
export interface RunStore {
  /** Record a run as it starts; a run id already recorded is refused (`invalid_input`). */
  openRun(record: RunRecord): Promise<void>;
  /** End a run, running or paused; `not_found` when there is none. */
  closeRun(runId: string, close: RunClose, options?: RunCloseOptions): Promise<void>;
  /** The run; undefined when it was never opened. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** A session's runs in start order. */
  listRuns(sessionKey: string): Promise<RunRecord[]>;
  /** Every run still `running`, across sessions (what a crash left open). Paused runs are not listed. */
  listOpenRuns(): Promise<RunRecord[]>;
  /** Every paused run, across sessions, in start order (what a restart must bring back as paused). */
  listPausedRuns(): Promise<RunRecord[]>;
  /**
   * Pause an open run or resume a paused one (`running`); refused (`not_found`) for a run that is not open. With
   * `progress`, the run's text, usage and cost so far are stored too (what a pause must keep for the resume).
   */
  setRunStatus(runId: string, status: OpenRunStatus, progress?: RunProgress): Promise<void>;
}
