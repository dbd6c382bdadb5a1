import { createSqliteLedger, type RuntimeEvent } from 'agentlanes';
import { type RunRecord } from 'agentlanes/ledger';
import {
  checkMessages,
  checkRedeliveries,
  type SessionRecordSet,
  type Violation,
  type ViolationKind,
} from './message-checks.js';
import { sidePathOf } from './mixed-protocol.js';
import { sessionKeys, type Tally } from './mixed-workload.js';
import { checkPlanAnswers, checkRuns, resumesOf } from './run-checks.js';
import { checkTools, readSideRecords } from './tool-checks.js';

/** What the file and the side records hold, and every promise they break. */
export interface MixedFindings {
  readonly violations: readonly Violation[];
  readonly counts: Readonly<Record<ViolationKind, number>>;
  readonly runs: number;
  readonly crashedRuns: number;
  /** Runs that completed after resuming from a kill. */
  readonly resumedRuns: number;
  /** Tool calls a kill left in doubt (each answered by the operator, never run again on its own). */
  readonly inDoubt: number;
  readonly planRuns: number;
  readonly messages: number;
  readonly toolExecutions: number;
  readonly approvals: number;
  readonly supplies: number;
  readonly tornSideLines: number;
}

/** Check the ledger file (read-only) and the side records against what the children acknowledged. */
export async function findMixedViolations(dbPath: string, tally: Tally): Promise<MixedFindings> {
  const ledger = createSqliteLedger({ path: dbPath, readonly: true });
  try {
    const violations: Violation[] = [...checkRedeliveries(tally)];
    const runs = new Map<string, RunRecord>();
    const events: RuntimeEvent[] = [];
    let messages = 0;
    for (const key of sessionKeys) {
      const record: SessionRecordSet = {
        key,
        messages: await ledger.listMessages(key),
        runs: await ledger.listRuns(key),
        turns: await ledger.listTurns(key),
      };
      const sessionEvents = await ledger.readEvents({ sessionKey: key });
      violations.push(...checkMessages(record, tally), ...checkRuns(key, record.runs, sessionEvents, tally));
      record.runs.forEach((run) => runs.set(run.runId, run));
      events.push(...sessionEvents);
      messages += record.messages.length;
    }
    for (const runId of tally.leftOpen) {
      if (!runs.has(runId))
        violations.push({ kind: 'lost', text: `run ${runId}, left open by a kill, is gone` });
    }
    violations.push(...checkPlanAnswers(runs, tally));
    const side = readSideRecords(sidePathOf(dbPath));
    violations.push(...(await checkTools(ledger, side.records, runs, events)));
    const counts = { lost: 0, duplicated: 0, misordered: 0, overlap: 0, 'tool-twice': 0, other: 0 };
    for (const violation of violations) counts[violation.kind]++;
    const all = [...runs.values()];
    const count = (kind: string) => side.records.filter((record) => record.kind === kind).length;
    return {
      violations,
      counts,
      runs: all.length,
      crashedRuns: all.filter((run) => run.status === 'crashed').length,
      resumedRuns: all.filter((run) => run.status === 'completed' && resumesOf(events, run.runId) > 0).length,
      inDoubt: events.filter((event) => event.type === 'tool.in_doubt').length,
      planRuns: all.filter((run) => run.provider === 'plan').length,
      messages,
      toolExecutions: count('executed'),
      approvals: count('approved'),
      supplies: count('supplied'),
      tornSideLines: side.torn,
    };
  } finally {
    await ledger.close();
  }
}
