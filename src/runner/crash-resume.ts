import type { Clock, EventInput, RuntimeEvent } from '../core/index.js';
import type { Ledger, RunRecord, ToolCallRecord, TurnRecord } from '../ledger/index.js';
import { countBlocks } from '../policies/index.js';
import type { ModelMessage, ToolCall } from '../providers/index.js';
import { rejectionContent } from './run-pause.js';
import type { ResumedCall, RunResume, ToolResultDraft } from './run-context.js';
import type { RunScope } from './execute-run.js';
import { serialize, skippedToolContent } from './tool-call.js';
import { turnsToMessages } from './transcript.js';

const crashError = { code: 'internal', message: 'the process stopped while the run was active' } as const;

/** A session's event numbering, advanced by each event emitted on it. */
export interface SessionNumbering {
  readonly key: string;
  lastSeq: number;
}

/** Where the crash record's events go: the runtime's event bus. */
export interface CrashEventSink {
  /** Stamp, record and deliver an event on a session that is not live. */
  emit(session: SessionNumbering, event: EventInput): unknown;
  /** Resolves once every event emitted so far is delivered. */
  flushed(): Promise<void>;
}

/** What writing the crash record needs. */
export interface CrashRecordDeps {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly events: CrashEventSink;
  readonly onError: (error: unknown) => void;
}

/** What becomes of the runs a crash (or a worker's death) left `running`. */
export interface RecoveryPolicy {
  /** `resume`: they go on from their last durable boundary; `close`: they are closed `crashed`. */
  readonly crashedRuns: 'resume' | 'close';
  /** Resumes one run may have (across restarts); past them it is closed `crashed`. */
  readonly maxResumes: number;
  /** A run started longer ago than this is closed `crashed` instead of resumed. */
  readonly maxAgeMs: number;
}

/** Resume by default, at most twice a run, runs younger than a day. */
export const defaultRecoveryPolicy: RecoveryPolicy = {
  crashedRuns: 'resume',
  maxResumes: 2,
  maxAgeMs: 86_400_000,
};

/** What recovery did with the open runs: the sessions it touched, and the runs that resume (their sessions hold them). */
export interface OpenRunsRecovered {
  readonly sessions: string[];
  readonly resumed: RunRecord[];
}

/** The run's resumes so far: its `run.resumed` events that followed a crash or a takeover (durable, so counted). */
export function resumesOf(events: readonly RuntimeEvent[], runId: string): number {
  return events.filter(
    (event) => event.type === 'run.resumed' && event.runId === runId && event.reason !== undefined,
  ).length;
}

/**
 * Recover the runs a crash left open: each resumes (a `run.resumed` with its attempt, durable before anything of
 * the resume happens, so the budget holds across repeated crashes), or, with `close`, past its resumes or its age,
 * is closed `crashed` with the text it had streamed and a `run.ended`, in one synchronous stretch so they commit
 * together (a crash meanwhile leaves the run open for the next start). What cannot be read is reported and skipped.
 */
export async function recoverOpenRuns(
  deps: CrashRecordDeps,
  options: {
    readonly policy: RecoveryPolicy;
    readonly reason: 'crash' | 'takeover';
    /** Only the runs of these sessions (a cluster worker taking over some sessions). @default every session */
    readonly only?: ReadonlySet<string> | undefined;
    /** Plan runs resume too (the caller runs them on); otherwise they are closed `crashed`. @default false */
    readonly resumePlans?: boolean;
  },
): Promise<OpenRunsRecovered> {
  const { ledger, onError } = deps;
  const { only } = options;
  const listed = await ledger.listOpenRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  const open = only === undefined ? listed : listed.filter((run) => only.has(run.sessionKey));
  const sessions = new Map<string, SessionNumbering>();
  const resumed: RunRecord[] = [];
  for (const run of open) {
    try {
      let numbering = sessions.get(run.sessionKey);
      if (numbering === undefined) {
        numbering = { key: run.sessionKey, lastSeq: (await ledger.loadSession(run.sessionKey)).lastSeq };
        sessions.set(run.sessionKey, numbering);
      }
      if (await resumeRun(deps, run, numbering, options)) resumed.push(run);
      else await closeCrashed(deps, run, await ledger.runText(run.runId), numbering);
    } catch (error) {
      onError(error);
    }
  }
  await deps.events.flushed();
  return { sessions: [...sessions.keys()], resumed };
}

/** Resume the run when the policy lets it: its `run.resumed` is recorded; false when it must be closed instead. */
async function resumeRun(
  deps: CrashRecordDeps,
  run: RunRecord,
  numbering: SessionNumbering,
  options: {
    readonly policy: RecoveryPolicy;
    readonly reason: 'crash' | 'takeover';
    readonly resumePlans?: boolean;
  },
): Promise<boolean> {
  const { policy, reason } = options;
  if (policy.crashedRuns === 'close' || policy.maxResumes <= 0) return false;
  // A plan run resumes only where its caller runs it on (startup recovery and a cluster takeover do).
  if (run.provider === 'plan' && options.resumePlans !== true) return false;
  if (deps.clock.now() - run.startedAt > policy.maxAgeMs) return false;
  const events = await deps.ledger.readEvents({ sessionKey: run.sessionKey });
  const attempt = resumesOf(events, run.runId) + 1;
  if (attempt > policy.maxResumes) return false;
  // Durable before the run does anything again (recoverOpenRuns waits for every run's at once).
  deps.events.emit(numbering, { type: 'run.resumed', runId: run.runId, attempt, reason });
  return true;
}

/** Close every run a crash left open as `crashed` (see `recoverOpenRuns`). Returns their sessions. */
export async function closeCrashedRuns(
  deps: CrashRecordDeps,
  /** Only the runs of these sessions. @default every session */
  only?: ReadonlySet<string>,
): Promise<string[]> {
  const policy = { ...defaultRecoveryPolicy, crashedRuns: 'close' } as const;
  return (await recoverOpenRuns(deps, { policy, reason: 'crash', only })).sessions;
}

/** Close one crashed run and emit its `run.ended` in one synchronous stretch, then wait for both. */
async function closeCrashed(
  deps: CrashRecordDeps,
  run: RunRecord,
  text: string,
  numbering: SessionNumbering,
): Promise<void> {
  const { ledger, clock, events } = deps;
  const endedAt = clock.now();
  const { runId, usage } = run;
  const closed = ledger.closeRun(runId, { status: 'crashed', endedAt, text, usage, error: crashError });
  const durationMs = endedAt - run.startedAt;
  events.emit(numbering, {
    type: 'run.ended',
    runId,
    status: 'crashed',
    text,
    usage,
    durationMs,
    error: crashError,
  });
  await closed;
  await events.flushed();
}

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
