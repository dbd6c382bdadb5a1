import type { ActiveRun } from '../actors/session-context.js';
import type { RunRequest, RunStarter } from '../actors/run-actor.js';
import type { RunResult, RunSummary } from '../actors/run-summary.js';
import type { Clock } from '../core/clock.js';
import { abortReason } from '../core/clock.js';
import { RuntimeError, toErrorInfo } from '../core/errors.js';
import type { EventInput } from '../core/events.js';
import type { GlobalLane, LaneWaitInfo } from '../lanes/global-lane.js';
import type { SessionLane } from '../lanes/session-lane.js';
import type { Ledger, TurnRecord } from '../ledger/ledger.js';
import type { Random } from '../core/ids.js';
import type { ModelMessage, ThinkingLevel } from '../providers/model-provider.js';
import type { Compactor } from '../runner/compaction.js';
import type { AuthProfilePool, ModelCandidate, PriceLookup } from '../runner/failover-context.js';
import { abortStatusOf } from '../runner/run-abort.js';
import {
  isRunPause,
  type RunContext,
  type RunLimits,
  type RunOutcome,
  type RunResume,
} from '../runner/run-context.js';
import { scrubErrorInfo, scrubErrorTurn, scrubEventError } from '../runner/scrub-event.js';
import { runTurnLoop } from '../runner/turn-loop.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { createApprovalGate } from './approval-gate.js';
import { cancelPause, loadResume, recordPause, settleBatch, type PauseDeps } from './run-pause.js';
import { turnsToMessages } from './transcript.js';

/** What running a session's run needs. */
export interface RunExecutorDeps {
  readonly ledger: Ledger;
  readonly sessionLane: SessionLane;
  readonly globalLane: GlobalLane;
  readonly clock: Clock;
  readonly emit: (sessionKey: string, event: EventInput) => void;
  /** The models to call, in fallback order (the first is the run's primary model). */
  readonly candidates: readonly [ModelCandidate, ...ModelCandidate[]];
  readonly thinking: ThinkingLevel | undefined;
  readonly profiles: AuthProfilePool;
  readonly prices: PriceLookup;
  readonly random: Random;
  readonly maxAttempts: number;
  /** The longest a model call waits for a cooling profile (`failover.maxWaitMs`). */
  readonly maxWaitMs: number;
  readonly compactor: Compactor;
  readonly system: string | undefined;
  /** The tools a session's runs may call (the runtime's policy layers, then the session's own). */
  readonly toolsFor: (sessionKey: string) => ToolRegistry;
  /** Tool names or globs that need approval whatever their risk. */
  readonly alwaysApprove: readonly string[];
  readonly limits: RunLimits & { readonly runTimeoutMs: number; readonly historyTurns: number };
  readonly blocks: { readonly minChars: number; readonly maxChars: number };
  /** False once the runtime is closing: runs that have not started yet stay queued. */
  readonly accepting: () => boolean;
  /** Reports a ledger write that failed in the background. */
  readonly onError: (error: unknown) => void;
}

/**
 * Build the function the session actor starts runs with: `sessionLane(key) -> globalLane -> turn loop`,
 * with the run opened, its messages marked consumed, its turns and end recorded in the ledger.
 */
export function createRunExecutor(deps: RunExecutorDeps): RunStarter {
  const { ledger, clock, onError } = deps;
  const primary = deps.candidates[0];
  const write = (promise: Promise<void>): void => {
    promise.catch(onError);
  };
  const pauseDeps: PauseDeps = {
    ledger,
    clock,
    emit: deps.emit,
    write,
    historyTurns: deps.limits.historyTurns,
  };

  async function history(sessionKey: string): Promise<readonly ModelMessage[]> {
    if (deps.limits.historyTurns === 0) return [];
    const turns = await ledger.listTurns(sessionKey, { last: deps.limits.historyTurns });
    return turnsToMessages(turns, deps.limits.historyTurns);
  }

  function open(request: RunRequest, run: ActiveRun, startedAt: number): void {
    const { sessionKey } = request;
    write(
      ledger.openRun({
        runId: run.runId,
        sessionKey,
        status: 'running',
        messageIds: run.messageIds,
        provider: primary.providerName,
        model: primary.model,
        startedAt,
        usage: { inputTokens: 0, outputTokens: 0 },
        text: '',
      }),
    );
    write(ledger.updateMessages(sessionKey, run.messageIds, { status: run.consumedAs, runId: run.runId }));
    deps.emit(sessionKey, {
      type: 'run.started',
      runId: run.runId,
      messageIds: [...run.messageIds],
      provider: primary.providerName,
      model: primary.model,
    });
  }

  function close(request: RunRequest, run: ActiveRun, startedAt: number, outcome: RunOutcome): RunSummary {
    const endedAt = clock.now();
    // Every error that ends a run passes here, whatever its class and path: scrub it of secrets once.
    const error =
      outcome.error === undefined ? {} : { error: scrubErrorInfo(outcome.error, deps.profiles.scrub) };
    write(
      ledger.closeRun(run.runId, {
        status: outcome.status,
        endedAt,
        text: outcome.text,
        usage: outcome.usage,
        cost: outcome.cost,
        ...error,
      }),
    );
    deps.emit(request.sessionKey, {
      type: 'run.ended',
      runId: run.runId,
      status: outcome.status,
      text: outcome.text,
      usage: outcome.usage,
      durationMs: endedAt - startedAt,
      ...error,
    });
    return {
      runId: run.runId,
      status: outcome.status,
      text: outcome.text,
      messageIds: run.messageIds,
      startedAt,
      endedAt,
      ...error,
    };
  }

  function contextFor(request: RunRequest, resume: RunResume | undefined, turnIndex: number, seq: number) {
    const { run, sessionKey } = request;
    let index = turnIndex;
    let nextSeq = seq;
    const runContext: RunContext = {
      runId: run.runId,
      sessionKey,
      prompt: run.prompt,
      messageIds: run.messageIds,
      history: [],
      failover: {
        candidates: deps.candidates,
        profiles: deps.profiles,
        prices: deps.prices,
        random: deps.random,
        maxAttempts: deps.maxAttempts,
        maxWaitMs: deps.maxWaitMs,
        thinking: deps.thinking,
        cost: resume?.cost ?? 0,
        ...(run.preferredProfile === undefined ? {} : { preferredProfile: run.preferredProfile }),
      },
      compactor: deps.compactor,
      ...(deps.system === undefined ? {} : { system: deps.system }),
      tools: deps.toolsFor(sessionKey),
      limits: deps.limits,
      blocks: deps.blocks,
      signal: request.signal,
      clock,
      steering: request.steering,
      approvals: createApprovalGate(ledger, sessionKey, run.runId, deps.alwaysApprove),
      ...(resume === undefined ? {} : { resume }),
      emit: (event) => deps.emit(sessionKey, scrubEventError(event, deps.profiles.scrub)),
      setPhase: request.setPhase,
      recordTurn: (draft) => {
        const turn = scrubErrorTurn(draft, deps.profiles.scrub);
        const record: TurnRecord = { ...turn, sessionKey, runId: run.runId, index: index++, at: clock.now() };
        write(ledger.appendTurns([record]));
      },
      compensate: (entry) => {
        const at = clock.now();
        const { toolCallId, tool, args, output } = entry;
        const compensation = { sessionKey, runId: run.runId, seq: nextSeq++, toolCallId, tool, args };
        write(
          ledger.appendCompensation({ ...compensation, result: output, status: 'pending', recordedAt: at }),
        );
        deps.emit(sessionKey, {
          type: 'undo.enqueued',
          runId: run.runId,
          toolCallId,
          tool,
          args,
          index: compensation.seq,
        });
      },
    };
    return runContext;
  }

  /** Run the turn loop with a timer for the run timeout; the outcome is the run's end or its next pause. */
  async function segment(request: RunRequest, runContext: RunContext, startedAt: number): Promise<RunResult> {
    const timer = clock.setTimeout(
      () => request.abort('timeout', `the run exceeded ${deps.limits.runTimeoutMs} ms`),
      deps.limits.runTimeoutMs,
    );
    try {
      const outcome = await runTurnLoop(runContext);
      if (isRunPause(outcome)) return recordPause(pauseDeps, request.sessionKey, request.run.runId, outcome);
      return close(request, request.run, startedAt, outcome);
    } finally {
      clock.clearTimeout(timer);
    }
  }

  async function execute(request: RunRequest): Promise<RunResult> {
    const { run, sessionKey } = request;
    if (run.resume !== undefined) return resumeRun(request);
    const startedAt = clock.now();
    open(request, run, startedAt);
    const runContext = { ...contextFor(request, undefined, 0, 1), history: await history(sessionKey) };
    return segment(request, runContext, startedAt);
  }

  /** Continue a paused run: settle its batch (approved calls run now), then go on with the turn loop. */
  async function resumeRun(request: RunRequest): Promise<RunResult> {
    const { run, sessionKey } = request;
    const loaded = await loadResume(pauseDeps, sessionKey, run.runId);
    const compensations = await ledger.listCompensations(run.runId);
    write(ledger.setRunStatus(run.runId, 'running'));
    deps.emit(sessionKey, { type: 'run.resumed', runId: run.runId, from: loaded.from });
    const base = contextFor(request, loaded.resume, loaded.turns, compensations.length + 1);
    const runContext: RunContext = {
      ...base,
      settleResumed: (results) => settleBatch(pauseDeps, loaded.batch, results),
    };
    return segment(request, runContext, run.startedAt);
  }

  /** A run aborted before it reached the turn loop: a new run opens and ends; a paused one ends as it stood. */
  async function abortedBeforeStart(request: RunRequest): Promise<RunSummary> {
    const { run } = request;
    const error = toErrorInfo(abortReason(request.signal));
    const status = abortStatusOf(request.signal);
    if (run.resume !== undefined) {
      const record = await ledger.getRun(run.runId);
      await cancelPause(pauseDeps, run.runId);
      const usage = record?.usage ?? { inputTokens: 0, outputTokens: 0 };
      const progress = { text: record?.text ?? '', usage, cost: record?.cost ?? 0 };
      return close(request, run, run.startedAt, { status, ...progress, error });
    }
    const startedAt = clock.now();
    open(request, run, startedAt);
    const nothing = { text: '', usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 };
    return close(request, run, startedAt, { status, ...nothing, error });
  }

  return async (request) => {
    // Start a microtask later, so the inbox record of the message that triggered the run is written first.
    await Promise.resolve();
    const { run, sessionKey, signal } = request;
    // A paused run aborted or interrupted meanwhile only ends; it needs no lane, and it ends even while closing.
    if (run.resume !== undefined && signal.aborted) return abortedBeforeStart(request);
    if (!deps.accepting()) throw new RuntimeError('runtime_closed', 'the runtime is closing');
    const onWaited = (info: LaneWaitInfo): void =>
      deps.emit(sessionKey, { type: 'lane.waited', runId: run.runId, ...info });
    return new Promise<RunResult>((resolve, reject) => {
      let started = false;
      let settled = false;
      const settle = (finish: () => void): void => {
        if (settled) return;
        settled = true;
        finish();
      };
      // Aborted while still waiting in a lane: the run never reached the model; it ends now, and the lane task
      // that would have run it returns at once when its turn comes. (One listener per run, instead of wiring
      // the signal through both lanes.)
      signal.addEventListener(
        'abort',
        () => {
          if (!started) settle(() => resolve(abortedBeforeStart(request)));
        },
        { once: true },
      );
      const task = (): Promise<RunResult | undefined> => {
        started = true;
        return signal.aborted ? Promise.resolve(undefined) : execute(request);
      };
      deps.sessionLane
        .run(sessionKey, () => deps.globalLane.run(task, { provider: primary.providerName, onWaited }))
        .then(
          (summary) =>
            settle(() => (summary === undefined ? resolve(abortedBeforeStart(request)) : resolve(summary))),
          (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
        );
    });
  };
}
