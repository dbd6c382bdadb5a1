import { isRuntimeError, isSettledWrite, toErrorInfo, type ErrorInfo } from '../core/index.js';
import type { ModelMessage } from '../providers/index.js';
import type { RunOutcome } from './run-context.js';
import type { RunScope } from './run-scope.js';
import { writeInBackground, type RunLease } from './run-services.js';
import type { RunSummary } from './run-summary.js';
import { scrubErrorInfo } from './scrub-event.js';
import { turnsToMessages } from './transcript.js';

/**
 * Record a run's opening: its run row, its messages marked consumed, and `run.started`. Rejects when either write
 * failed: the run must not reach its model (nothing it did could be recorded).
 */
export function openRunRecord(scope: RunScope, startedAt: number): Promise<void> {
  const { services, request, port } = scope;
  const { run, sessionKey } = request;
  const primary = services.candidates[0];
  const parent = services.subagents.parentOf(sessionKey);
  const opened = services.ledger.openRun({
    runId: run.runId,
    sessionKey,
    ...(parent === undefined ? {} : { parentRunId: parent.parentRunId, parentCallId: parent.parentCallId }),
    status: 'running',
    messageIds: run.messageIds,
    provider: primary.providerName,
    model: primary.model,
    startedAt,
    usage: { inputTokens: 0, outputTokens: 0 },
    text: '',
  });
  const consumed = services.ledger.updateMessages(sessionKey, run.messageIds, {
    status: run.consumedAs,
    runId: run.runId,
  });
  writeInBackground(services, opened);
  writeInBackground(services, consumed);
  port.emit({
    type: 'run.started',
    runId: run.runId,
    messageIds: [...run.messageIds],
    provider: primary.providerName,
    model: primary.model,
  });
  // Callers wait for both before any side effect; a failure (also reported above) stops the run there.
  if (isSettledWrite(opened) && isSettledWrite(consumed)) return opened;
  return Promise.all([opened, consumed]).then(() => undefined);
}

/** The closing stretch of a run: its row closed and `run.ended` emitted together (one group-commit transaction). */
function writeRunEnd(
  scope: RunScope,
  startedAt: number,
  outcome: RunOutcome,
): { readonly summary: RunSummary; readonly committed: Promise<void> } {
  const { services, request, port } = scope;
  const { run } = request;
  const endedAt = services.clock.now();
  const error =
    outcome.error === undefined ? {} : { error: scrubErrorInfo(outcome.error, services.profiles.scrub) };
  const { status, text, usage, cost } = outcome;
  // One synchronous stretch: group commit puts the run's row and its run.ended in one transaction, so a crash or
  // a failed commit keeps neither (the bus delivers run.ended only once it is durable).
  const committed = services.ledger.closeRun(run.runId, { status, endedAt, text, usage, cost, ...error });
  port.emit({
    type: 'run.ended',
    runId: run.runId,
    status,
    text,
    usage,
    durationMs: endedAt - startedAt,
    ...error,
  });
  const summary = {
    runId: run.runId,
    status,
    text,
    messageIds: run.messageIds,
    startedAt,
    endedAt,
    ...error,
  };
  return { summary, committed };
}

/** The outcome of a run whose commit could not be written: `failed`, saying why. */
function commitFailed(outcome: RunOutcome, what: string, cause: unknown): RunOutcome {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const message = `${what}: ${reason}`;
  return { ...outcome, status: 'failed', error: { code: 'ledger_unavailable', message } };
}

/** True once the ledger faulted under the run (read afresh: it changes while the run awaits). */
function isLost(lease: RunLease | undefined): boolean {
  return lease?.lost === true;
}

/**
 * The end of a run the ledger failed under: nothing is written (a write now would fail and leave the run `running`
 * while its session looks idle). The run waits, its session's machine still running it, until the ledger heals; its session is
 * then reconciled from the ledger, which closes the run as a crash does, with the text that was recorded.
 */
export async function holdRunEnd(
  scope: RunScope,
  startedAt: number,
  outcome: RunOutcome,
): Promise<RunSummary> {
  const { services, request } = scope;
  await services.ledgerGuard?.healed();
  const error = { code: 'ledger_unavailable', message: 'the ledger could not record the run' } as const;
  return {
    runId: request.run.runId,
    status: 'crashed',
    text: outcome.text,
    messageIds: request.run.messageIds,
    startedAt,
    endedAt: services.clock.now(),
    error,
  };
}

/**
 * Commit a run's end once its turns are durable: its status, final text, usage and cost with `run.ended`, in one
 * transaction (its error scrubbed of secrets). A run one of whose turns was not recorded ends `failed`; a commit
 * that fails is written again as `failed` (`ledger_unavailable`, saying why), and if that fails too the run stays
 * open in the ledger, to be closed `crashed` at the next start. Resolves with the summary the ledger holds. A run
 * whose `lease` was lost to a ledger fault writes nothing and waits for the ledger instead (`holdRunEnd`).
 */
export async function commitRun(
  scope: RunScope,
  startedAt: number,
  outcome: RunOutcome,
  lease?: RunLease,
): Promise<RunSummary> {
  const { services } = scope;
  const lost = await scope.writes.settled();
  if (isLost(lease)) return holdRunEnd(scope, startedAt, outcome);
  const checked =
    lost === undefined ? outcome : commitFailed(outcome, 'a turn of the run was not recorded', lost);
  const first = writeRunEnd(scope, startedAt, checked);
  try {
    await first.committed;
    return first.summary;
  } catch (error) {
    services.onError(error);
    // The lease is lost by now when the commit failed because the ledger did (the guard saw the failure first).
    if (isLost(lease)) return holdRunEnd(scope, startedAt, outcome);
    const second = writeRunEnd(
      scope,
      startedAt,
      commitFailed(outcome, 'the run could not be committed', error),
    );
    second.committed.catch(services.onError);
    return second.summary;
  }
}

/**
 * The session's earlier conversation a new run sees (`historyTurns` of it), or the error the run ends with when
 * the read met a corrupt row (`ledger_corrupt`, already reported by the ledger): that is not transient, so the
 * run must not go back to the queue to meet it again. Any other failure is thrown (the run did not start, and
 * the drain retries it). The read is awaited once, with no extra hop: a steer sent meanwhile lands as it did.
 */
export async function runHistory(
  scope: RunScope,
): Promise<readonly ModelMessage[] | { readonly error: ErrorInfo }> {
  const { ledger, limits } = scope.services;
  if (limits.historyTurns === 0) return [];
  try {
    const turns = await ledger.listTurns(scope.request.sessionKey, { last: limits.historyTurns });
    return turnsToMessages(turns, limits.historyTurns);
  } catch (error) {
    if (!isRuntimeError(error, 'ledger_corrupt')) throw error;
    return { error: toErrorInfo(error) };
  }
}
