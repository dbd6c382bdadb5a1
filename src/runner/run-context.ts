import type { InlineAttachment, ErrorInfo, EventInput, PauseState, RunStatus } from '../core/index.js';
import type { ModelMessage, ToolCall, Usage } from '../providers/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { TurnRecord } from '../ledger/index.js';
import type { FailoverState } from './model-call.js';
import { type RunServices, writeInBackground } from './run-services.js';
import type { SteerInbox } from './run-request.js';
import type { RunScope } from './execute-run.js';
import { scrubErrorTurn, scrubEventError } from './scrub-event.js';

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

/**
 * What one run of the turn loop holds of its own (ids, prompt, signal, steering, resume state, failover state,
 * the session's event sink); everything shared comes from `services`.
 */
export interface RunContext {
  /** The one bag of services every run shares (ledger, clock, models, limits, compactor, ...). */
  readonly services: RunServices;
  readonly runId: string;
  readonly sessionKey: string;
  /** The user turn that starts the run (a message's text, or the collect prompt). */
  readonly prompt: string;
  /** The inline attachments that follow the prompt's text (references; the bytes are read per model call). */
  readonly attachments?: readonly InlineAttachment[];
  readonly messageIds: readonly string[];
  /** The session's earlier conversation. */
  readonly history: readonly ModelMessage[];
  /** The tools this session's runs may call, resolved once when the run starts. */
  readonly tools: ToolRegistry;
  readonly signal: AbortSignal;
  readonly steering: SteerInbox;
  /** What changes as the run goes: its thinking level, its cost, its preferred auth profile. */
  readonly failover: FailoverState;
  /** Set when the run continues after a pause: where it stood and how its paused batch was settled. */
  readonly resume?: RunResume;
  emit(event: EventInput): void;
  /** Resolves once the run's events so far are recorded. @default resolves at once */
  durable?(): Promise<void>;
  setPhase(phase: RunPhase): void;
  recordTurn(turn: TurnDraft): void;
  /** Record the compensation of a call that succeeded with a tool that has `undo`. */
  compensate(entry: CompensationDraft): void;
  /** The resumed batch's results went back to the model (in call order). */
  settleResumed?(results: readonly ToolResultDraft[]): void;
}

/** What a compensation records: the call, its arguments and its output. */
export interface CompensationDraft {
  readonly toolCallId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly output: unknown;
}

/** A tool result for the model: the content and whether it reports an error. */
export interface ToolResultDraft {
  readonly content: string;
  readonly isError: boolean;
}

/**
 * A call of a paused batch on resume: it has its result already, or (approved) it runs now. A run resumed after a
 * crash may also hold a call that never started (`run.fresh`: it runs as the model asked, approval gate included)
 * and a call in doubt (`inDoubt`: it started, its outcome is unknown, and it waits for an operator).
 */
export type ResumedCall =
  | { readonly call: ToolCall; readonly result: ToolResultDraft }
  | { readonly call: ToolCall; readonly run: { readonly args?: unknown; readonly fresh?: boolean } }
  | { readonly call: ToolCall; readonly inDoubt: true };

/** Where a paused run stood, to continue it. */
export interface RunResume {
  /** The conversation up to and including the assistant turn whose tool calls paused the run. */
  readonly messages: readonly ModelMessage[];
  /** Model turns of the run that asked for tools so far. */
  readonly toolTurns: number;
  /** The text of each of the run's assistant turns before the pause (its blocks are numbered on after them). */
  readonly assistantTexts: readonly string[];
  /** The run's assistant text, usage and cost before the pause. */
  readonly text: string;
  readonly usage: Usage;
  readonly cost: number;
  /** The paused batch, in call order. */
  readonly batch: readonly ResumedCall[];
  /** The next block index, when blocks of an interrupted model call went out. @default counted from `assistantTexts` */
  readonly blockIndex?: number;
  /** Positions of the batch already recorded as paused calls (an earlier pause): a new pause updates them. */
  readonly recorded?: ReadonlySet<number>;
}

/** A call of a batch that paused the run: it ran already (with its result), or it waits. */
export interface PausedCall {
  readonly position: number;
  readonly call: ToolCall;
  /** `in_doubt`: it started before a crash with no recorded outcome; it waits for an operator as an approval does. */
  readonly kind: 'ran' | 'approval' | 'deferred' | 'in_doubt';
  readonly result?: ToolResultDraft;
}

/** A run that paused: every call of the batch that paused it, and the run's progress so far. */
export interface RunPause {
  readonly status: PauseState;
  /** The tool turn of the run the batch belongs to (from 1). */
  readonly turn: number;
  readonly calls: readonly PausedCall[];
  readonly text: string;
  readonly usage: Usage;
  readonly cost: number;
  /** Positions already recorded (see `RunResume.recorded`). */
  readonly recorded?: ReadonlySet<number>;
}

/** True when the turn loop paused instead of ending. */
export function isRunPause(outcome: RunOutcome | RunPause): outcome is RunPause {
  return outcome.status === 'awaiting_approval' || outcome.status === 'awaiting_tool_results';
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

/** Where a run's numbering stands: its next transcript index and its next compensation number. */
export interface RunCounters {
  readonly turnIndex: number;
  readonly compensationSeq: number;
}

/** What a segment's context holds beyond the scope: the earlier conversation, how a resumed batch settles. */
export type SegmentParts = Pick<RunContext, 'history' | 'settleResumed'>;

/**
 * The turn loop's context for one segment of a run (from its start, or from a pause with `resume`): the run's one
 * object, built once with its `parts` (not copied to add them).
 */
export function buildRunContext(
  scope: RunScope,
  resume: RunResume | undefined,
  counters: RunCounters,
  parts: SegmentParts = { history: [] },
): RunContext {
  const { services, request, port } = scope;
  const { run, sessionKey } = request;
  const scrub = services.profiles.scrub;
  let index = counters.turnIndex;
  return {
    services,
    runId: run.runId,
    sessionKey,
    prompt: run.prompt,
    ...(run.attachments === undefined ? {} : { attachments: run.attachments }),
    messageIds: run.messageIds,
    history: parts.history,
    tools: services.toolsFor(sessionKey),
    signal: request.signal,
    steering: request.steering,
    failover: {
      thinking: services.thinking,
      cost: resume?.cost ?? 0,
      ...(run.preferredProfile === undefined ? {} : { preferredProfile: run.preferredProfile }),
    },
    ...(resume === undefined ? {} : { resume }),
    emit: (event) => port.emit(scrubEventError(event, scrub)),
    ...(port.durable === undefined ? {} : { durable: () => port.durable?.() ?? Promise.resolve() }),
    setPhase: (phase) => port.setPhase(phase),
    recordTurn: (draft) => {
      const turn = scrubErrorTurn(draft, scrub);
      const at = services.clock.now();
      const record: TurnRecord = { ...turn, sessionKey, runId: run.runId, index: index++, at };
      const written = services.ledger.appendTurns([record]);
      scope.writes.track(written);
      writeInBackground(services, written);
    },
    compensate: createCompensator(scope, counters.compensationSeq),
    ...(parts.settleResumed === undefined ? {} : { settleResumed: parts.settleResumed }),
  };
}

/** Record each compensation of the run (numbered on from `firstSeq`) and announce it with `undo.enqueued`. */
function createCompensator(scope: RunScope, firstSeq: number): (entry: CompensationDraft) => void {
  const { services, request, port } = scope;
  let nextSeq = firstSeq;
  return (entry) => {
    const { toolCallId, tool, args, output } = entry;
    const recordedAt = services.clock.now();
    const compensation = {
      sessionKey: request.sessionKey,
      runId: request.run.runId,
      seq: nextSeq++,
      toolCallId,
      tool,
      args,
    };
    writeInBackground(
      services,
      services.ledger.appendCompensation({ ...compensation, result: output, status: 'pending', recordedAt }),
    );
    port.emit({
      type: 'undo.enqueued',
      runId: request.run.runId,
      toolCallId,
      tool,
      args,
      index: compensation.seq,
    });
  };
}
