import { settledWrite, type Deferred } from '../core/index.js';
import type { RunEnding, RunPausing, RunSummary } from './run-request.js';
import { isRunPausing } from './run-request.js';
import type { RunOutcome } from './run-context.js';
import type { RunLease } from './run-services.js';
import type { RunScope } from './execute-run.js';
import { scrubErrorInfo } from './scrub-event.js';

/*
 * A run's end: what its close writes, handed back unwritten (`RunEnding`) so that the session side writes it where
 * its machine adopts it (actors/session-runs.ts), and the end of a run the ledger failed under, which writes nothing.
 */

/** The end a run's close writes: its summary, and its error scrubbed of secrets. */
function summaryOf(scope: RunScope, startedAt: number, outcome: RunOutcome): RunSummary {
  const { services, request } = scope;
  const { run } = request;
  const error =
    outcome.error === undefined ? {} : { error: scrubErrorInfo(outcome.error, services.profiles.scrub) };
  const { status, text } = outcome;
  const endedAt = services.clock.now();
  return { runId: run.runId, status, text, messageIds: run.messageIds, startedAt, endedAt, ...error };
}

/** What a closing stretch issued: the row's commit, and the delivery of its `run.ended` (or its failed write). */
interface EndWrite {
  readonly committed: Promise<void>;
  readonly announced: Promise<void>;
}

/**
 * The closing stretch of a run: its row closed and `run.ended` emitted together (one group-commit transaction), the
 * close tied to the run's writes `after` that may still be waiting in that transaction.
 */
function writeRunEnd(
  scope: RunScope,
  summary: RunSummary,
  outcome: RunOutcome,
  after: readonly Promise<void>[],
): EndWrite {
  const { services, port } = scope;
  const { runId, status, text, startedAt, endedAt } = summary;
  const { usage, cost } = outcome;
  const error = summary.error === undefined ? {} : { error: summary.error };
  const close = { status, endedAt, text, usage, cost, ...error };
  // One synchronous stretch: group commit puts the run's row and its run.ended in one transaction, so a crash or
  // a failed commit keeps neither (the bus delivers run.ended only once it is durable).
  const committed =
    after.length === 0
      ? services.ledger.closeRun(runId, close)
      : services.ledger.closeRun(runId, close, { after });
  port.emit({ type: 'run.ended', runId, status, text, usage, durationMs: endedAt - startedAt, ...error });
  return { committed, announced: port.delivered?.() ?? settledWrite };
}

/** Why a run one of whose turns was not recorded ended `failed`. */
const turnLost = 'a turn of the run was not recorded';

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
 * A run's end once its turns are durable, to be written where its session machine adopts it (`RunEnding`): its
 * status, final text, usage and cost with `run.ended`, in one transaction (its error scrubbed of secrets). A run one
 * of whose turns was not recorded ends `failed`. A run whose `lease` was lost to a ledger fault writes nothing and
 * waits for the ledger instead (`holdRunEnd`). The ending keeps the lease until its close settled.
 */
export async function commitRun(
  scope: RunScope,
  startedAt: number,
  outcome: RunOutcome,
  lease?: RunLease,
): Promise<RunSummary | RunEnding> {
  // A ledger that ties the close to the run's pending writes (`Ledger.closesWith`: SQLite's and Postgres's) takes it
  // at once, in their transaction or after it: one COMMIT per run instead of two in a row. Others are waited for.
  const joined = scope.writes.joinable(scope.services.ledger) !== undefined;
  const lost = joined ? undefined : await scope.writes.settled();
  if (isLost(lease)) return holdRunEnd(scope, startedAt, outcome);
  const checked = lost === undefined ? outcome : commitFailed(outcome, turnLost, lost);
  const summary = summaryOf(scope, startedAt, checked);
  return {
    summary,
    close: (corrected) => {
      const closed = closeRunEnd(scope, { summary, checked, outcome, joined }, lease, corrected);
      const exit = (): void => lease?.exit();
      closed.then(exit, exit);
      return closed;
    },
  };
}

/** A run's end as `closeRunEnd` writes it: `summary` (adopted by the machine) from `checked`, cut from `outcome`. */
interface PlannedEnd {
  readonly summary: RunSummary;
  readonly checked: RunOutcome;
  readonly outcome: RunOutcome;
  /** The close was to join the transaction of the run's pending turns (`commitRun`). */
  readonly joined: boolean;
}

/**
 * The end to write once the run's turns settled, for a close that was to join their transaction and can no longer
 * (their batch committed or failed between the run's end and its adoption): `failed` when one of them was lost.
 */
async function endAfterTurns(scope: RunScope, end: PlannedEnd): Promise<PlannedEnd> {
  const lost = await scope.writes.settled();
  // Lost before the run ended: `commitRun` waited for it, and `end` says so already.
  if (lost === undefined || !end.joined) return end;
  const checked = commitFailed(end.outcome, turnLost, lost);
  return { ...end, checked, summary: summaryOf(scope, end.summary.startedAt, checked) };
}

/**
 * Write a run's end now (see `RunEnding.close`): a commit that fails is written again as `failed`
 * (`ledger_unavailable`, saying why: a lost turn when the close shared its transaction), told to `corrected` in the
 * stretch that writes it; if that fails too the run stays open in the ledger, to be closed `crashed` at the next
 * start. A run whose ledger faulted writes nothing: its `crashed` end is told once the ledger healed. Resolves with
 * the end the ledger holds, once announced.
 */
async function closeRunEnd(
  scope: RunScope,
  planned: PlannedEnd,
  lease: RunLease | undefined,
  corrected: (summary: RunSummary) => void,
): Promise<RunSummary> {
  const { services } = scope;
  const { outcome } = planned;
  const held = async (): Promise<RunSummary> => {
    const crashed = await holdRunEnd(scope, planned.summary.startedAt, outcome);
    corrected(crashed);
    return crashed;
  };
  if (isLost(lease)) return held();
  let end = planned;
  let after = scope.writes.joinable(services.ledger);
  // No await before the write otherwise: a close that joins its turns' transaction is written in this stretch.
  if (after === undefined) {
    end = await endAfterTurns(scope, planned);
    after = [];
    if (isLost(lease)) return held();
  }
  const { summary, checked } = end;
  const first = writeRunEnd(scope, summary, checked, after);
  if (summary !== planned.summary) corrected(summary);
  try {
    await first.committed;
    await first.announced;
    return summary;
  } catch (error) {
    services.onError(error);
    // A close that joined its turns failed with their transaction: the turn is what was lost.
    const lost = end.joined ? await scope.writes.settled() : undefined;
    // The lease is lost by now when the commit failed because the ledger did (the guard saw the failure first).
    if (isLost(lease)) return held();
    const failed =
      lost === undefined
        ? commitFailed(outcome, 'the run could not be committed', error)
        : commitFailed(outcome, turnLost, lost);
    const rewritten = summaryOf(scope, summary.startedAt, failed);
    const second = writeRunEnd(scope, rewritten, failed, []);
    corrected(rewritten);
    second.committed.catch(services.onError);
    await second.announced;
    return rewritten;
  }
}

/**
 * `executed`, telling `adopted` once its session's machine adopted it and issued its write (its end's close, its
 * pause's records): the run's work is over then, and its lane slot goes to the next run, whose first writes share
 * the close's group commit on SQLite instead of waiting for it (one COMMIT per message instead of two).
 */
export function holdUntilAdopted(
  executed: RunEnding | RunPausing,
  adopted: Deferred<void>,
): RunEnding | RunPausing {
  if (isRunPausing(executed)) {
    return {
      paused: executed.paused,
      record: () => {
        const recorded = executed.record();
        adopted.resolve();
        return recorded;
      },
    };
  }
  return {
    summary: executed.summary,
    close: (corrected) => {
      const closed = executed.close(corrected);
      adopted.resolve();
      return closed;
    },
  };
}
