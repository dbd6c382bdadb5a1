import type { TurnRecord } from '../ledger/index.js';
import type { CompensationDraft, RunContext, RunResume } from './run-context.js';
import type { RunScope } from './execute-run.js';
import { writeInBackground } from './run-services.js';
import { scrubErrorTurn, scrubEventError } from './scrub-event.js';

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
