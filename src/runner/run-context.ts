import type { Clock } from '../core/clock.js';
import type { ErrorInfo } from '../core/errors.js';
import type { EventInput, RunStatus } from '../core/events.js';
import type { ModelMessage, Usage } from '../providers/model-provider.js';
import type { Compactor } from './compaction.js';
import type { FailoverContext } from './failover-context.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { TurnRecord } from '../ledger/ledger.js';
import type { SteerInbox } from './steer-inbox.js';

/** Where a run stands; the session actor mirrors it to decide what a new message does. */
export const runPhases = ['starting', 'streaming', 'tools', 'compacting', 'settling'] as const;
/** A run's phase. */
export type RunPhase = (typeof runPhases)[number];

/** The turn-loop limits. */
export interface RunLimits {
  /** Model turns that may ask for tools before the run fails with `turn_limit`. @default 25 */
  readonly maxToolTurns: number;
  /** Tool calls of one model turn that run at once. @default 4 */
  readonly parallelToolCalls: number;
  /** Invalid tool calls fed back to the model before the run fails with `tool_failed`. @default 3 */
  readonly toolCorrectionBudget: number;
}

/** A transcript entry before the runtime stamps session, run, index and time on it. */
export type TurnDraft = Omit<TurnRecord, 'sessionKey' | 'runId' | 'index' | 'at'>;

/** Everything one run of the turn loop needs; capabilities come in, nothing is global. */
export interface RunContext {
  readonly runId: string;
  readonly sessionKey: string;
  /** The user turn that starts the run (a message's text, or the collect prompt). */
  readonly prompt: string;
  readonly messageIds: readonly string[];
  /** The session's earlier conversation. */
  readonly history: readonly ModelMessage[];
  readonly system?: string;
  /** The models to call, in fallback order, with their auth profiles, prices and attempt budget. */
  readonly failover: FailoverContext;
  /** Shrinks the conversation on a context overflow. */
  readonly compactor: Compactor;
  readonly tools: ToolRegistry;
  readonly limits: RunLimits;
  readonly blocks: { readonly minChars: number; readonly maxChars: number };
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly steering: SteerInbox;
  emit(event: EventInput): void;
  setPhase(phase: RunPhase): void;
  recordTurn(turn: TurnDraft): void;
}

/** How a run ended. `text` is all assistant text of the run: the partial output when it did not complete. */
export interface RunOutcome {
  readonly status: RunStatus;
  readonly text: string;
  readonly usage: Usage;
  /** What the run's model calls cost (unknown prices count 0). */
  readonly cost: number;
  readonly error?: ErrorInfo;
}
