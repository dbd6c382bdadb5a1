import type { ActiveRun } from '../actors/session-context.js';
import type { RunRequest, RunStarter } from '../actors/run-actor.js';
import type { RunSummary } from '../actors/run-summary.js';
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
import type { RunLimits, RunOutcome } from '../runner/run-context.js';
import { runTurnLoop } from '../runner/turn-loop.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
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
  readonly compactor: Compactor;
  readonly system: string | undefined;
  readonly tools: ToolRegistry;
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
    const error = outcome.error === undefined ? {} : { error: outcome.error };
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

  async function execute(request: RunRequest): Promise<RunSummary> {
    const { run, sessionKey } = request;
    const startedAt = clock.now();
    open(request, run, startedAt);
    const timer = clock.setTimeout(
      () => request.abort('timeout', `the run exceeded ${deps.limits.runTimeoutMs} ms`),
      deps.limits.runTimeoutMs,
    );
    let index = 0;
    try {
      const outcome = await runTurnLoop({
        runId: run.runId,
        sessionKey,
        prompt: run.prompt,
        messageIds: run.messageIds,
        history: await history(sessionKey),
        failover: {
          candidates: deps.candidates,
          profiles: deps.profiles,
          prices: deps.prices,
          random: deps.random,
          maxAttempts: deps.maxAttempts,
          thinking: deps.thinking,
          cost: 0,
          ...(run.preferredProfile === undefined ? {} : { preferredProfile: run.preferredProfile }),
        },
        compactor: deps.compactor,
        ...(deps.system === undefined ? {} : { system: deps.system }),
        tools: deps.tools,
        limits: deps.limits,
        blocks: deps.blocks,
        signal: request.signal,
        clock,
        steering: request.steering,
        emit: (event) => deps.emit(sessionKey, event),
        setPhase: request.setPhase,
        recordTurn: (turn) => {
          const record: TurnRecord = {
            ...turn,
            sessionKey,
            runId: run.runId,
            index: index++,
            at: clock.now(),
          };
          write(ledger.appendTurns([record]));
        },
      });
      return close(request, run, startedAt, outcome);
    } finally {
      clock.clearTimeout(timer);
    }
  }

  function abortedBeforeStart(request: RunRequest): RunSummary {
    const startedAt = clock.now();
    open(request, request.run, startedAt);
    return close(request, request.run, startedAt, {
      status: abortStatusOf(request.signal),
      text: '',
      usage: { inputTokens: 0, outputTokens: 0 },
      cost: 0,
      error: toErrorInfo(abortReason(request.signal)),
    });
  }

  return async (request) => {
    // Start a microtask later, so the inbox record of the message that triggered the run is written first.
    await Promise.resolve();
    const { run, sessionKey, signal } = request;
    if (!deps.accepting()) throw new RuntimeError('runtime_closed', 'the runtime is closing');
    const onWaited = (info: LaneWaitInfo): void =>
      deps.emit(sessionKey, { type: 'lane.waited', runId: run.runId, ...info });
    return new Promise<RunSummary>((resolve, reject) => {
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
      const task = (): Promise<RunSummary | undefined> => {
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
