import { createSqliteLedger, type RuntimeEvent } from 'agentlanes';
import { type InboxRecord, type RunRecord } from 'agentlanes/ledger';

/** What the test saw the children acknowledge, and which runs each kill left open in the file. */
export interface Observed {
  readonly sessions: readonly string[];
  /** Message id -> the child's ack line (written only after send() resolved). */
  readonly acked: ReadonlyMap<string, { readonly disposition: string; readonly runId?: string }>;
  /** Message ids whose queue.cancel() resolved true. */
  readonly cancelled: ReadonlySet<string>;
  /** Runs still `running` in the file right after some SIGKILL. */
  readonly leftOpen: ReadonlySet<string>;
}

/** The per-session sequence number of a test message id (`s3-m17` -> 17). */
function sequenceOf(messageId: string): number {
  return Number(messageId.slice(messageId.lastIndexOf('-m') + 2));
}

const consumedStatuses = new Set(['consumed', 'collected']);
const refusedStatuses = new Set(['dropped', 'cancelled']);

function checkInbox(
  key: string,
  messages: readonly InboxRecord[],
  runs: readonly RunRecord[],
  observed: Observed,
): string[] {
  const violations: string[] = [];
  const takenBy = new Map<string, string[]>();
  for (const run of runs) {
    for (const id of run.messageIds) takenBy.set(id, [...(takenBy.get(id) ?? []), run.runId]);
  }
  const inbox = new Map<string, InboxRecord>();
  for (const message of messages) {
    if (inbox.has(message.messageId)) violations.push(`${key}: ${message.messageId} is in the inbox twice`);
    inbox.set(message.messageId, message);
    const takers = takenBy.get(message.messageId) ?? [];
    if (consumedStatuses.has(message.status)) {
      if (takers.length !== 1 || takers[0] !== message.runId)
        violations.push(
          `${key}: ${message.messageId} is ${message.status} by ${message.runId} but in runs [${takers.join(', ')}]`,
        );
    } else if (refusedStatuses.has(message.status)) {
      if (takers.length > 0)
        violations.push(
          `${key}: ${message.messageId} is ${message.status} but ran in [${takers.join(', ')}]`,
        );
    } else {
      violations.push(`${key}: ${message.messageId} is still ${message.status} at the end`);
    }
  }
  for (const [id, takers] of takenBy) {
    if (!inbox.has(id))
      violations.push(`${key}: runs [${takers.join(', ')}] ran ${id}, which is not in the inbox`);
  }
  for (const [id, ack] of observed.acked) {
    if (!id.startsWith(`${key}-m`)) continue;
    const record = inbox.get(id);
    if (!['started', 'queued', 'collected'].includes(ack.disposition))
      violations.push(
        `${key}: ${id} was answered ${ack.disposition} (followup/collect, no cap refusals expected)`,
      );
    if (record === undefined)
      violations.push(`${key}: acknowledged ${id} (${ack.disposition}) is not in the inbox`);
    // A run waiting in a lane is not in the ledger yet: if a kill came first, the message runs again under a new id.
    const started = runs.find((run) => run.runId === ack.runId);
    if (started !== undefined && !started.messageIds.includes(id))
      violations.push(`${key}: ${id} was acknowledged as started by ${ack.runId}, which did not run it`);
  }
  for (const id of observed.cancelled) {
    if (!id.startsWith(`${key}-m`)) continue;
    const status = inbox.get(id)?.status;
    if (status !== 'cancelled')
      violations.push(`${key}: ${id} was cancelled (acknowledged) but is ${status}`);
  }
  return violations;
}

/** How many times a run resumed after a kill (its `run.resumed` events that name a reason). */
function resumesOf(events: readonly RuntimeEvent[], runId: string): number {
  return events.filter(
    (event) => event.type === 'run.resumed' && event.runId === runId && event.reason !== undefined,
  ).length;
}

/** A tool call or plan step of the run was found in doubt after a crash. */
function inDoubtIn(events: readonly RuntimeEvent[], runId: string): boolean {
  return events.some((event) => event.type === 'tool.in_doubt' && event.runId === runId);
}

function checkRuns(
  key: string,
  runs: readonly RunRecord[],
  events: readonly RuntimeEvent[],
  observed: Observed,
) {
  const violations: string[] = [];
  const order = runs.flatMap((run) => run.messageIds);
  for (let index = 1; index < order.length; index++) {
    const [before, after] = [order[index - 1] as string, order[index] as string];
    if (sequenceOf(after) <= sequenceOf(before)) violations.push(`${key}: ${after} ran after ${before}`);
  }
  runs.forEach((run, index) => {
    const next = runs[index + 1];
    if (run.status === 'running') violations.push(`${key}: run ${run.runId} is still running at the end`);
    else if (next !== undefined && (run.endedAt === undefined || run.endedAt > next.startedAt))
      violations.push(
        `${key}: run ${run.runId} (${run.startedAt}..${run.endedAt}) overlaps the next run ${next.runId} (from ${next.startedAt})`,
      );
    // A run a kill cut resumes to a whole answer; only one cut past its resumes (2) is closed crashed.
    const leftOpen = observed.leftOpen.has(run.runId);
    const resumes = resumesOf(events, run.runId);
    // A plan whose step in doubt the operator rejected fails (the step's outcome is unknown).
    const failedInDoubt = run.status === 'failed' && inDoubtIn(events, run.runId);
    if (
      leftOpen &&
      run.status !== 'completed' &&
      !failedInDoubt &&
      !(run.status === 'crashed' && resumes === 2)
    )
      violations.push(
        `${key}: run ${run.runId}, cut by a kill and resumed ${resumes} times, is ${run.status}`,
      );
    if (!leftOpen && (run.status === 'crashed' || resumes > 0))
      violations.push(
        `${key}: run ${run.runId} is ${run.status} after ${resumes} resumes, but no kill left it open`,
      );
  });
  for (const run of runs) {
    const ended = events.filter((event) => event.type === 'run.ended' && event.runId === run.runId);
    if (ended.length > 1) violations.push(`${key}: run ${run.runId} has ${ended.length} run.ended events`);
    const blocks = events.filter((event) => event.type === 'assistant.block' && event.runId === run.runId);
    if (
      new Set(blocks.map((event) => event.type === 'assistant.block' && event.blockId)).size !== blocks.length
    )
      violations.push(`${key}: run ${run.runId} numbered two blocks alike`);
    if (run.status !== 'crashed') continue;
    const [event] = ended;
    if (event?.type !== 'run.ended' || event.status !== 'crashed' || event.text !== run.text)
      violations.push(
        `${key}: crashed run ${run.runId} has no matching run.ended event (${JSON.stringify(event)})`,
      );
    const streamed = events
      .filter((delta) => delta.type === 'assistant.delta' && delta.runId === run.runId)
      .map((delta) => (delta.type === 'assistant.delta' ? delta.delta : ''))
      .join('');
    // A run that resumed streamed its cut attempts too; its recorded text is the one of its completed turns.
    if (resumesOf(events, run.runId) === 0 && streamed !== run.text)
      violations.push(
        `${key}: crashed run ${run.runId} recorded text ${JSON.stringify(run.text)}, streamed ${JSON.stringify(streamed)}`,
      );
  }
  return violations;
}

/** Everything the file breaks of the durability promise, as readable lines (empty when it keeps it). */
export async function findViolations(
  dbPath: string,
  observed: Observed,
): Promise<{
  violations: string[];
  crashedRuns: number;
  resumedRuns: number;
  failedPlans: number;
  runs: number;
  messages: number;
}> {
  const ledger = createSqliteLedger({ path: dbPath, readonly: true });
  try {
    const violations: string[] = [];
    let crashedRuns = 0;
    let resumedRuns = 0;
    let failedPlans = 0;
    let runCount = 0;
    let messageCount = 0;
    const allRunIds = new Set<string>();
    for (const key of observed.sessions) {
      const messages = await ledger.listMessages(key);
      const runs = await ledger.listRuns(key);
      const events = await ledger.readEvents({ sessionKey: key });
      violations.push(
        ...checkInbox(key, messages, runs, observed),
        ...checkRuns(key, runs, events, observed),
      );
      crashedRuns += runs.filter((run) => run.status === 'crashed').length;
      resumedRuns += runs.filter(
        (run) => run.status === 'completed' && resumesOf(events, run.runId) > 0,
      ).length;
      failedPlans += runs.filter(
        (run) => run.status === 'failed' && observed.leftOpen.has(run.runId) && inDoubtIn(events, run.runId),
      ).length;
      runCount += runs.length;
      messageCount += messages.length;
      for (const run of runs) allRunIds.add(run.runId);
    }
    for (const runId of observed.leftOpen) {
      if (!allRunIds.has(runId)) violations.push(`run ${runId}, left open by a kill, is gone`);
    }
    return { violations, crashedRuns, resumedRuns, failedPlans, runs: runCount, messages: messageCount };
  } finally {
    await ledger.close();
  }
}
