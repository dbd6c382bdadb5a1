import type { InlineAttachment } from '../core/index.js';
import type { PauseState } from '../core/index.js';
import type { AbortStatus } from './run-abort.js';
import type { RunResult } from './run-summary.js';
import type { SteerInbox } from './steer-inbox.js';
import type { RunPort } from './session-port.js';

/** What a session machine runs: an agent run (messages to the model), a plan run, or an undo. */
export const runKinds = ['agent', 'plan', 'undo'] as const;
/** A kind of run the session machine owns. */
export type RunKind = (typeof runKinds)[number];

/** The run a session machine hands out to execute: its messages, its prompt, and where it stands. */
export interface RunTicket {
  readonly runId: string;
  /** What runs. @default 'agent' */
  readonly kind?: RunKind;
  /** A plan run's or an undo's job (`RunJobs`), the work its caller handed the session. */
  readonly job?: string;
  readonly prompt: string;
  /** The inline attachments of its messages, in message order, after the prompt's text. */
  readonly attachments?: readonly InlineAttachment[];
  readonly messageIds: readonly string[];
  /** `collected` when several collect-mode messages were merged into this run. */
  readonly consumedAs: 'consumed' | 'collected';
  readonly startedAt: number;
  /** The session's preferred auth profile when the run started. */
  readonly preferredProfile?: string;
  /** Set when the run continues after a pause (with `abort`, it only ends). */
  readonly resume?: {
    readonly from: PauseState;
    readonly abort?: { readonly status: AbortStatus; readonly reason: string };
  };
}

/** What the session side hands the run lifecycle to execute one run. */
export interface RunRequest {
  readonly sessionKey: string;
  readonly run: RunTicket;
  readonly signal: AbortSignal;
  readonly steering: SteerInbox;
  /** Abort the run's own controller (the run timeout; a ledger that cannot record the run). */
  readonly abort: (status: AbortStatus, reason: string) => void;
}

/**
 * Executes a run; resolves with its summary once ended and recorded, or with the pause once recorded, or rejects
 * when it could not start (then its messages go back to the queue).
 */
export type ExecuteRun = (request: RunRequest, port: RunPort) => Promise<RunResult>;
