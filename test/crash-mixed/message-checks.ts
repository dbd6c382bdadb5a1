import type { InboxRecord, RunRecord, TurnRecord } from 'agentlanes/ledger';
import { acceptedDispositions, type Tally } from './mixed-workload.js';

/** What a violation breaks; the summary line counts them by kind. */
export type ViolationKind = 'lost' | 'duplicated' | 'misordered' | 'overlap' | 'tool-twice' | 'other';

/** One broken promise, readable. */
export interface Violation {
  readonly kind: ViolationKind;
  readonly text: string;
}

/** One session's record, as read from the ledger file. */
export interface SessionRecordSet {
  readonly key: string;
  readonly messages: readonly InboxRecord[];
  readonly runs: readonly RunRecord[];
  readonly turns: readonly TurnRecord[];
}

/** The per-session sequence number of a workload message id (`s003-m17` -> 17). */
function sequenceOf(messageId: string): number {
  return Number(messageId.slice(messageId.lastIndexOf('-m') + 2));
}

/**
 * The runs each message reached: the runs that took it (`messageIds`) and the runs whose transcript admitted it
 * (a steer turn). A `steer-backlog` message may reach two: the run it steered and the followup run it queued.
 */
function executionsOf(record: SessionRecordSet): Map<string, Set<string>> {
  const executions = new Map<string, Set<string>>();
  const add = (messageId: string, runId: string) => {
    const runs = executions.get(messageId) ?? new Set<string>();
    runs.add(runId);
    executions.set(messageId, runs);
  };
  for (const run of record.runs) run.messageIds.forEach((id) => add(id, run.runId));
  for (const turn of record.turns) (turn.messageIds ?? []).forEach((id) => add(id, turn.runId));
  return executions;
}

function checkInbox(
  record: SessionRecordSet,
  tally: Tally,
  executions: Map<string, Set<string>>,
): Violation[] {
  const { key } = record;
  const violations: Violation[] = [];
  const seen = new Set<string>();
  for (const message of record.messages) {
    const id = message.messageId;
    if (seen.has(id)) violations.push({ kind: 'duplicated', text: `${key}: ${id} is in the inbox twice` });
    seen.add(id);
    const runs = [...(executions.get(id) ?? [])];
    const list = `[${runs.join(', ')}]`;
    const backlog = tally.sent.get(id)?.mode === 'steer-backlog';
    if (message.status === 'pending') {
      violations.push({ kind: 'lost', text: `${key}: ${id} is still pending at the end` });
    } else if (message.status === 'dropped' || message.status === 'cancelled') {
      if (runs.length > (backlog ? 1 : 0))
        violations.push({
          kind: 'duplicated',
          text: `${key}: ${id} is ${message.status} but ran in ${list}`,
        });
    } else if (runs.length === 0) {
      violations.push({ kind: 'lost', text: `${key}: ${id} is ${message.status} but reached no run` });
    } else if (runs.length > (backlog ? 2 : 1)) {
      violations.push({ kind: 'duplicated', text: `${key}: ${id} (${message.mode}) ran in ${list}` });
    } else if (
      message.status !== 'steered' &&
      (message.runId === undefined || !runs.includes(message.runId))
    ) {
      violations.push({
        kind: 'other',
        text: `${key}: ${id} is ${message.status} by ${message.runId} but ran in ${list}`,
      });
    }
  }
  for (const [id, runs] of executions) {
    if (!seen.has(id))
      violations.push({
        kind: 'other',
        text: `${key}: runs [${[...runs].join(', ')}] ran ${id}, not in the inbox`,
      });
  }
  return violations;
}

function checkAcks(
  record: SessionRecordSet,
  tally: Tally,
  executions: Map<string, Set<string>>,
): Violation[] {
  const { key } = record;
  const violations: Violation[] = [];
  const inbox = new Set(record.messages.map((message) => message.messageId));
  for (const [id, ack] of tally.acked) {
    if (tally.sent.get(id)?.sessionKey !== key) continue;
    if (acceptedDispositions.has(ack.disposition)) {
      if (!inbox.has(id))
        violations.push({
          kind: 'lost',
          text: `${key}: acknowledged ${id} (${ack.disposition}) is not in the inbox`,
        });
      const started = record.runs.find((run) => run.runId === ack.runId);
      // A run waiting in a lane is not in the ledger yet: if a kill came first, the message runs under a new id.
      if (ack.disposition === 'started' && started !== undefined && !started.messageIds.includes(id))
        violations.push({
          kind: 'other',
          text: `${key}: ${id} was acknowledged as started by ${ack.runId}, which did not run it`,
        });
    } else if (ack.disposition === 'rejected') {
      if (inbox.has(id) || executions.has(id))
        violations.push({
          kind: 'duplicated',
          text: `${key}: ${id} was rejected (${ack.code}) but was stored or ran`,
        });
    } else {
      violations.push({ kind: 'other', text: `${key}: first send of ${id} was answered ${ack.disposition}` });
    }
  }
  return violations;
}

/**
 * Whether a message must keep its arrival order among the others. Steered messages (admitted into the running
 * run, or returned to the front of the queue when the run ended first) and interrupting ones (run ahead of the
 * queue) move ahead by design; a steer or steer-backlog message whose answer was lost to a kill may have been
 * either, so it is left out too.
 */
function keepsOrder(tally: Tally, id: string): boolean {
  const mode = tally.sent.get(id)?.mode;
  if (mode === 'followup' || mode === 'collect' || mode === 'reject') return true;
  if (mode !== 'steer' && mode !== 'steer-backlog') return false;
  const disposition = tally.acked.get(id)?.disposition;
  return disposition !== undefined && disposition !== 'steered';
}

function checkOrder(record: SessionRecordSet, tally: Tally): Violation[] {
  const ordered = record.runs.flatMap((run) => run.messageIds).filter((id) => keepsOrder(tally, id));
  const violations: Violation[] = [];
  for (let index = 1; index < ordered.length; index++) {
    const [before, after] = [ordered[index - 1] as string, ordered[index] as string];
    if (sequenceOf(after) <= sequenceOf(before))
      violations.push({ kind: 'misordered', text: `${record.key}: ${after} ran after ${before}` });
  }
  return violations;
}

/** Every way one session's messages break no-loss, no-duplicate or arrival order. */
export function checkMessages(record: SessionRecordSet, tally: Tally): Violation[] {
  const executions = executionsOf(record);
  return [
    ...checkInbox(record, tally, executions),
    ...checkAcks(record, tally, executions),
    ...checkOrder(record, tally),
  ];
}

/** Every redelivery of an accepted id must be answered `duplicate` (the dedupe window survives a kill). */
export function checkRedeliveries(tally: Tally): Violation[] {
  return tally.redeliveries
    .filter((redelivery) => redelivery.disposition !== 'duplicate')
    .map((redelivery) => ({
      kind: 'duplicated' as const,
      text: `${redelivery.id} was accepted again (${redelivery.disposition}) when redelivered`,
    }));
}
