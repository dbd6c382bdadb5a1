import { assertNever } from '../../core/index.js';
import { eventGuard } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import type { Ledger } from '../../ledger/index.js';
import type { ChannelLog } from './demo-users.js';

/** Event counts the closing table shows. */
export interface DemoCounts {
  runs: number;
  completed: number;
  steered: number;
  collected: number;
  interrupted: number;
  aborted: number;
  laneWaits: number;
  tokens: number;
  rotations: number;
  fallbacks: number;
  cooldowns: number;
  approvalsRequested: number;
  approved: number;
}

/** The event types the closing table counts; every other event leaves the counts alone. */
const isCounted = eventGuard([
  'run.started',
  'run.ended',
  'message.steered',
  'message.collected',
  'lane.waited',
  'assistant.delta',
  'failover.rotated',
  'failover.fallback',
  'profile.cooldown',
  'approval.requested',
  'approval.resolved',
]);

/** Fold one event into the counts. */
export function countEvent(counts: DemoCounts, event: RuntimeEvent): void {
  if (!isCounted(event)) return;
  switch (event.type) {
    case 'run.started':
      counts.runs++;
      break;
    case 'run.ended':
      if (event.status === 'completed') counts.completed++;
      if (event.status === 'interrupted') counts.interrupted++;
      if (event.status === 'aborted') counts.aborted++;
      break;
    case 'message.steered':
      counts.steered++;
      break;
    case 'message.collected':
      counts.collected++;
      break;
    case 'lane.waited':
      counts.laneWaits++;
      break;
    case 'assistant.delta':
      counts.tokens++;
      break;
    case 'failover.rotated':
      counts.rotations++;
      break;
    case 'failover.fallback':
      counts.fallbacks++;
      break;
    case 'profile.cooldown':
      counts.cooldowns++;
      break;
    case 'approval.requested':
      counts.approvalsRequested++;
      break;
    case 'approval.resolved':
      if (event.decision === 'approve') counts.approved++;
      break;
    default:
      assertNever(event, 'counted event');
  }
}

/**
 * Check every accepted message against the record: it must have reached a run (consumed, collected, or steered
 * and admitted into a run's transcript) or carry an explicit dropped/cancelled status. Returns the lost ids.
 */
export async function findLost(ledger: Ledger, log: ChannelLog): Promise<string[]> {
  const lost: string[] = [];
  for (const [sessionKey, messageIds] of log.accepted) {
    const inbox = new Map(
      (await ledger.listMessages(sessionKey)).map((record) => [record.messageId, record]),
    );
    const ran = new Set((await ledger.listRuns(sessionKey)).flatMap((run) => run.messageIds));
    const admitted = new Set((await ledger.listTurns(sessionKey)).flatMap((turn) => turn.messageIds ?? []));
    for (const messageId of messageIds) {
      const status = inbox.get(messageId)?.status;
      const accounted =
        status === 'dropped' ||
        status === 'cancelled' ||
        ((status === 'consumed' || status === 'collected') && ran.has(messageId)) ||
        (status === 'steered' && admitted.has(messageId));
      if (!accounted) lost.push(messageId);
    }
  }
  return lost;
}

/** The closing table, as lines. */
export function closingTable(counts: DemoCounts, log: ChannelLog, lost: number, seconds: number): string[] {
  const accepted = [...log.accepted.values()].reduce((sum, ids) => sum + ids.length, 0);
  const rows: [string, number | string][] = [
    ['messages sent', log.sent],
    ['messages in (accepted)', accepted],
    ['duplicates answered', log.duplicates],
    ['runs', counts.runs],
    ['completed', counts.completed],
    ['steered', counts.steered],
    ['collected', counts.collected],
    ['interrupted', counts.interrupted],
    ['aborted (/stop)', counts.aborted],
    ['lane waits', counts.laneWaits],
    ['profile rotations', counts.rotations],
    ['model fallbacks', counts.fallbacks],
    ['profile cooldowns', counts.cooldowns],
    ['approvals requested', counts.approvalsRequested],
    ['approved by operator', counts.approved],
    ['tokens streamed', counts.tokens],
    ['seconds', seconds.toFixed(1)],
    ['lost', lost],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(10)}+`;
  return [
    line,
    ...rows.map(([label, value]) => `| ${label.padEnd(width)} | ${String(value).padStart(8)} |`),
    line,
  ];
}
