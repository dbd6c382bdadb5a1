import { existsSync, readFileSync } from 'node:fs';
import type { Ledger, RuntimeEvent } from 'agentlanes';
import type { RunRecord } from 'agentlanes/ledger';
import type { Violation } from './message-checks.js';
import type { SideRecord } from './mixed-protocol.js';

/** The side records of the test, with lines a kill cut short counted apart (a line is one write, so none expected). */
export function readSideRecords(sidePath: string): { records: SideRecord[]; torn: number } {
  if (!existsSync(sidePath)) return { records: [], torn: 0 };
  const records: SideRecord[] = [];
  let torn = 0;
  for (const line of readFileSync(sidePath, 'utf8').split('\n')) {
    if (line.length === 0) continue;
    try {
      records.push(JSON.parse(line) as SideRecord);
    } catch {
      torn++;
    }
  }
  return { records, torn };
}

const keyOf = (runId: string, toolCallId: string): string => `${runId}/${toolCallId}`;

/** No tool call executed twice, no deferred call supplied twice (keyed by run and call id). */
function checkOnce(records: readonly SideRecord[]): Violation[] {
  const counts = new Map<string, number>();
  for (const record of records) {
    if (record.kind === 'approved') continue;
    const key = `${record.kind} ${record.tool} ${keyOf(record.runId, record.toolCallId)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, count]) => count > 1)
    .map(([key, count]) => ({ kind: 'tool-twice' as const, text: `${key} happened ${count} times` }));
}

/** A tool that succeeded (per its event) executed exactly where the side records say. */
function checkSucceeded(events: readonly RuntimeEvent[], executed: ReadonlySet<string>): Violation[] {
  const violations: Violation[] = [];
  for (const event of events) {
    if (event.type !== 'tool.succeeded' || event.tool === 'lookup') continue;
    if (!executed.has(keyOf(event.runId ?? '', event.toolCallId)))
      violations.push({
        kind: 'other',
        text: `${event.sessionKey}: ${event.tool} ${event.toolCallId} of ${event.runId} succeeded without executing`,
      });
  }
  return violations;
}

/**
 * A high-risk call executed only with the operator's approval: a chat call's recorded decision is `approve`, or the
 * runtime recorded an approval of it (`approval.resolved`: a call approved and run before a crash comes back in
 * doubt, and the operator's rejection of running it again becomes its recorded decision); a plan step is in the
 * plan's approved steps. Every executed call belongs to a recorded run.
 */
async function checkApproved(
  ledger: Ledger,
  records: readonly SideRecord[],
  runs: ReadonlyMap<string, RunRecord>,
  events: readonly RuntimeEvent[],
): Promise<Violation[]> {
  const approvals = new Set(
    events.flatMap((event) =>
      event.type === 'approval.resolved' && event.decision === 'approve'
        ? [keyOf(event.runId ?? '', event.toolCallId)]
        : [],
    ),
  );
  const violations: Violation[] = [];
  for (const record of records) {
    if (record.kind !== 'executed') continue;
    const run = runs.get(record.runId);
    const where = `${record.sessionKey}: ${record.tool} ${keyOf(record.runId, record.toolCallId)}`;
    if (run === undefined) {
      violations.push({ kind: 'other', text: `${where} executed in a run the ledger does not have` });
      continue;
    }
    if (record.tool !== 'refund') continue;
    let approved: boolean;
    if (run.provider === 'plan') {
      approved = (await ledger.getPlan(record.runId))?.approvedSteps.includes(record.toolCallId) ?? false;
    } else {
      const calls = await ledger.listToolCalls(record.runId);
      const call = calls.find((candidate) => candidate.toolCallId === record.toolCallId);
      approved =
        call?.decision?.decision === 'approve' || approvals.has(keyOf(record.runId, record.toolCallId));
    }
    if (!approved) violations.push({ kind: 'other', text: `${where} executed without an approval` });
  }
  return violations;
}

/** Every way the side records break "no tool run twice" and "no high-risk tool without approval". */
export async function checkTools(
  ledger: Ledger,
  records: readonly SideRecord[],
  runs: ReadonlyMap<string, RunRecord>,
  events: readonly RuntimeEvent[],
): Promise<Violation[]> {
  const executed = new Set(
    records
      .filter((record) => record.kind === 'executed')
      .map((record) => keyOf(record.runId, record.toolCallId)),
  );
  return [
    ...checkOnce(records),
    ...checkSucceeded(events, executed),
    ...(await checkApproved(ledger, records, runs, events)),
    ...(await checkCompletedPlans(ledger, records, runs)),
  ];
}

/** A completed plan executed each of its steps exactly once. */
async function checkCompletedPlans(
  ledger: Ledger,
  records: readonly SideRecord[],
  runs: ReadonlyMap<string, RunRecord>,
): Promise<Violation[]> {
  const steps = new Map<string, string[]>();
  for (const record of records) {
    if (record.kind !== 'executed' || runs.get(record.runId)?.provider !== 'plan') continue;
    steps.set(record.runId, [...(steps.get(record.runId) ?? []), record.toolCallId]);
  }
  const violations: Violation[] = [];
  for (const run of runs.values()) {
    if (run.provider !== 'plan' || run.status !== 'completed') continue;
    const plan = (await ledger.getPlan(run.runId))?.plan as { steps?: { id: string }[] } | undefined;
    const expected = (plan?.steps ?? []).map((step) => step.id).sort();
    const ran = (steps.get(run.runId) ?? []).sort();
    if (ran.join() !== expected.join())
      violations.push({
        kind: 'other',
        text: `${run.sessionKey}: completed plan ${run.runId} executed [${ran.join(', ')}] of [${expected.join(', ')}]`,
      });
  }
  return violations;
}
