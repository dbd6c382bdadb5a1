import type { RuntimeEvent } from '../core/index.js';
import { countBlocks } from '../policies/index.js';
import type { ToolCallRecord, TurnRecord } from '../ledger/index.js';
import type { ModelMessage, ToolCall } from '../providers/index.js';
import { rejectionContent } from './run-pause.js';
import type { ResumedCall, RunResume, ToolResultDraft } from './run-context.js';
import type { RunScope } from './run-scope.js';
import { serialize, skippedToolContent } from './tool-call.js';
import { turnsToMessages } from './transcript.js';

/** Where a run cut by a crash stands in the ledger, to resume it from its last durable boundary. */
export interface CrashResume {
  readonly resume: RunResume;
  /** The run's recorded turns (the next turn's index). */
  readonly turns: number;
  /** The run's answer was recorded whole before the crash: it only needs closing. */
  readonly answered: boolean;
  /** The cut batch's calls an earlier pause recorded, in position order (settled once their results are in). */
  readonly records: readonly ToolCallRecord[];
}

/** What the recorded events of a run say about its calls and its blocks. */
interface RunTrace {
  /** The outcome of each call id that has one (the latest of `tool.succeeded` / `tool.failed` / `tool.skipped`). */
  readonly outcomes: Map<string, ToolResultDraft>;
  /** Call ids with a `tool.called` (they started). */
  readonly started: Set<string>;
  /** The index after the run's last `assistant.block`. */
  readonly nextBlock: number;
}

/** Read a run's calls and blocks from its session's recorded events. */
function traceOf(events: readonly RuntimeEvent[], runId: string): RunTrace {
  const outcomes = new Map<string, ToolResultDraft>();
  const started = new Set<string>();
  let nextBlock = 0;
  for (const event of events) {
    if (event.runId !== runId) continue;
    if (event.type === 'tool.called') {
      started.add(event.toolCallId);
      outcomes.delete(event.toolCallId);
    } else if (event.type === 'tool.succeeded') {
      outcomes.set(event.toolCallId, { content: serialize(event.output), isError: false });
    } else if (event.type === 'tool.failed') {
      outcomes.set(event.toolCallId, { content: `Error: ${event.error.message}`, isError: true });
    } else if (event.type === 'tool.skipped') {
      outcomes.set(event.toolCallId, { content: skippedToolContent, isError: false });
    } else if (event.type === 'assistant.block') {
      nextBlock = Math.max(nextBlock, event.index + 1);
    }
  }
  return { outcomes, started, nextBlock };
}

/** The run's last assistant turn whose calls did not all get a recorded result: the batch the crash cut. */
function openBatch(runTurns: readonly TurnRecord[]): readonly ToolCall[] {
  const last = runTurns.findLastIndex((turn) => turn.role === 'assistant');
  const calls = runTurns[last]?.toolCalls ?? [];
  const answered = new Set(runTurns.slice(last + 1).map((turn) => turn.toolCallId));
  return calls.some((call) => !answered.has(call.id)) ? calls : [];
}

/** How one call of the cut batch continues: its recorded outcome, run again or for the first time, or in doubt. */
function resumedCallOf(
  scope: RunScope,
  call: ToolCall,
  record: ToolCallRecord | undefined,
  trace: RunTrace,
): ResumedCall {
  if (record?.status === 'rejected') {
    return { call, result: { content: rejectionContent(record.decision?.message), isError: true } };
  }
  if (record?.result !== undefined) return { call, result: record.result };
  const outcome = trace.outcomes.get(call.id);
  if (outcome !== undefined) return { call, result: outcome };
  const approved = record?.status === 'approved' || record?.status === 'supplied';
  const edited = record?.decision?.decision === 'edit' ? { args: record.decision.args } : {};
  if (!trace.started.has(call.id)) return { call, run: approved ? edited : { fresh: true } };
  // Started, no outcome: run again only what is declared safe to repeat.
  if (scope.services.toolByName(call.name)?.idempotent === true) return { call, run: edited };
  return { call, inDoubt: true };
}

/**
 * Rebuild where a run cut by a crash stood, from what is durable: the conversation (history, the run's user turns,
 * completed model turns and recorded tool results; the interrupted model call's partial text is left out, so the
 * call is made again), the batch the crash cut (each call: its recorded outcome, run again when it never started or
 * its tool is idempotent, in doubt otherwise), and the block index after the last block that went out.
 */
export async function loadCrashResume(scope: RunScope, runId: string): Promise<CrashResume> {
  const { ledger, limits, blocks } = scope.services;
  const { sessionKey } = scope.request;
  const record = await ledger.getRun(runId);
  const runTurns = await ledger.listRunTurns(runId);
  const historyTurns = limits.historyTurns;
  const earlier =
    historyTurns === 0 ? [] : await ledger.listTurns(sessionKey, { last: historyTurns + runTurns.length });
  const history = turnsToMessages(
    earlier.filter((turn) => turn.runId !== runId),
    historyTurns,
  );
  const cut = openBatch(runTurns);
  const trace = traceOf(await ledger.readEvents({ sessionKey }), runId);
  const toolTurns = runTurns.filter((turn) => (turn.toolCalls?.length ?? 0) > 0).length;
  const recordedCalls = (await ledger.listToolCalls(runId)).filter((call) => call.turn === toolTurns);
  const recordAt = new Map(recordedCalls.map((call) => [call.position, call]));
  const own: ModelMessage[] = turnsToMessages(runTurns, runTurns.length, new Set(cut.map((call) => call.id)));
  const assistantTexts = runTurns.filter((turn) => turn.role === 'assistant').map((turn) => turn.content);
  const last = runTurns.at(-1);
  return {
    turns: runTurns.length,
    records: recordedCalls.length === cut.length ? recordedCalls : [],
    answered: last?.role === 'assistant' && (last.toolCalls?.length ?? 0) === 0,
    resume: {
      messages: [...history, ...own],
      toolTurns,
      assistantTexts,
      text: assistantTexts.filter((text) => text.length > 0).join('\n\n'),
      usage: record?.usage ?? { inputTokens: 0, outputTokens: 0 },
      cost: record?.cost ?? 0,
      batch: cut.map((call, position) => resumedCallOf(scope, call, recordAt.get(position), trace)),
      blockIndex: Math.max(trace.nextBlock, countBlocks(assistantTexts, blocks)),
      recorded: new Set(cut.length === 0 ? [] : recordAt.keys()),
    },
  };
}
