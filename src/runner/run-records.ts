import type { ModelMessage } from '../providers/model-provider.js';
import type { RunOutcome } from './run-context.js';
import type { RunScope } from './run-scope.js';
import { writeInBackground } from './run-services.js';
import type { RunSummary } from './run-summary.js';
import { scrubErrorInfo } from './scrub-event.js';
import { turnsToMessages } from './transcript.js';

/** Record a run's opening: its run row, its messages marked consumed, and `run.started`. */
export function openRunRecord(scope: RunScope, startedAt: number): Promise<void> {
  const { services, request, port } = scope;
  const { run, sessionKey } = request;
  const primary = services.candidates[0];
  const opened = services.ledger.openRun({
    runId: run.runId,
    sessionKey,
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
  // Settles once both writes did (a failure is reported above): callers wait for it before any side effect.
  return Promise.allSettled([opened, consumed]).then(() => undefined);
}

/** Record a run's end (its error scrubbed of secrets, once, whatever its path) and emit `run.ended`. */
export function closeRunRecord(scope: RunScope, startedAt: number, outcome: RunOutcome): RunSummary {
  const { services, request, port } = scope;
  const { run } = request;
  const endedAt = services.clock.now();
  const error =
    outcome.error === undefined ? {} : { error: scrubErrorInfo(outcome.error, services.profiles.scrub) };
  const { status, text, usage, cost } = outcome;
  writeInBackground(
    services,
    services.ledger.closeRun(run.runId, { status, endedAt, text, usage, cost, ...error }),
  );
  port.emit({
    type: 'run.ended',
    runId: run.runId,
    status,
    text,
    usage,
    durationMs: endedAt - startedAt,
    ...error,
  });
  return { runId: run.runId, status, text, messageIds: run.messageIds, startedAt, endedAt, ...error };
}

/** The session's earlier conversation a new run sees (`historyTurns` of it). */
export async function runHistory(scope: RunScope): Promise<readonly ModelMessage[]> {
  const { ledger, limits } = scope.services;
  if (limits.historyTurns === 0) return [];
  const turns = await ledger.listTurns(scope.request.sessionKey, { last: limits.historyTurns });
  return turnsToMessages(turns, limits.historyTurns);
}
