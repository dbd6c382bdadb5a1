import type { ToolRetrySettings } from '../policies/index.js';
import type { ToolOutcome } from '../tools/index.js';

/**
 * One plan step handed to whatever runs it outside the plan run (a job on any worker of a cluster). The owner has
 * already applied the session's tool policy and checked the args; the runner finds the tool by its name.
 */
export interface StepJob {
  readonly toolCallId: string;
  readonly sessionKey: string;
  readonly runId: string;
  /** The tool's name: each worker runs its own configured tool of that name. */
  readonly tool: string;
  /** The step's args as resolved (plain JSON), checked by the owner; the runner parses them with its own tool. */
  readonly args: unknown;
  /** Time limit of one attempt when the tool sets none. */
  readonly timeoutMs?: number;
  /** Retries when the tool sets none. */
  readonly retry?: ToolRetrySettings;
}

/**
 * Runs a step's tool somewhere else and resolves with what `executeTool` would have: never rejects, and an abort of
 * `signal` resolves the same failure an aborted inline execution gives.
 */
export type StepToolRunner = (job: StepJob, signal: AbortSignal) => Promise<ToolOutcome>;
