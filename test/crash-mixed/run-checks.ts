import type { RunRecord } from 'agentlanes/ledger';
import type { RuntimeEvent } from 'agentlanes';
import type { Violation } from './message-checks.js';
import type { Tally } from './mixed-workload.js';

/** Events only a run that holds the session lane emits: it is doing its work (model call, tools, plan steps). */
const workEvents = new Set<RuntimeEvent['type']>([
  'assistant.delta',
  'cost.updated',
  'tool.called',
  'tool.succeeded',
  'tool.failed',
  'tool.skipped',
  'step.executed',
  'message.admitted',
]);

/**
 * No two chat runs of a session are open at once: from `run.started` to `run.ended` (paused time included: the
 * session holds its paused run and queues what arrives) no other chat run starts. Read from the session's events in
 * seq order (the order they were emitted); a run a kill left open stays so until startup recovery closes it.
 */
function checkChatOverlaps(key: string, events: readonly RuntimeEvent[]): Violation[] {
  const violations: Violation[] = [];
  let open: string | undefined;
  for (const event of events) {
    if (event.type === 'run.started' && event.provider !== 'plan') {
      if (open !== undefined)
        violations.push({
          kind: 'overlap',
          text: `${key}: chat run ${event.runId} started (seq ${event.seq}) while chat run ${open} was open`,
        });
      open = event.runId;
    } else if (event.type === 'run.ended' && event.runId === open) open = undefined;
  }
  return violations;
}

/**
 * No two runs of a session (chat or plan) do work at once: once a run emitted a work event, no other run of the
 * session emits one until it pauses or ends. A kill stops every run's work: a run resumed after it (`run.resumed`
 * with a reason) is at work again only from its next work event, once its lane is its own.
 */
function checkWorkOverlaps(key: string, events: readonly RuntimeEvent[]): Violation[] {
  const violations: Violation[] = [];
  let working: string | undefined;
  for (const event of events) {
    const runId = event.runId ?? '';
    if (workEvents.has(event.type)) {
      if (working !== undefined && working !== runId)
        violations.push({
          kind: 'overlap',
          text: `${key}: run ${runId} did ${event.type} (seq ${event.seq}) while run ${working} was at work`,
        });
      working = runId;
    } else if ((event.type === 'run.paused' || event.type === 'run.ended') && runId === working) {
      working = undefined;
    } else if (event.type === 'run.resumed' && event.reason !== undefined && runId === working) {
      working = undefined;
    }
  }
  return violations;
}

/**
 * Statuses a run of this workload may end with: it never aborts, times out or fails on purpose. A plan paused for
 * approval holds its session like a paused chat run, so an interrupting message ends it too; a plan whose step a
 * kill left in doubt may fail, since the operator rejects that step (its outcome is unknown).
 */
const chatEndings = new Set(['completed', 'interrupted', 'crashed']);
const planEndings = new Set(['completed', 'interrupted', 'crashed']);

function endingAllowed(run: RunRecord, events: readonly RuntimeEvent[]): boolean {
  if (run.provider !== 'plan') return chatEndings.has(run.status);
  if (planEndings.has(run.status)) return true;
  const inDoubt = events.some((event) => event.type === 'tool.in_doubt' && event.runId === run.runId);
  return run.status === 'failed' && inDoubt;
}

function checkEndings(
  key: string,
  runs: readonly RunRecord[],
  events: readonly RuntimeEvent[],
  tally: Tally,
) {
  const violations: Violation[] = [];
  for (const run of runs) {
    const ended = events.filter((event) => event.type === 'run.ended' && event.runId === run.runId);
    const plan = run.provider === 'plan';
    if (!endingAllowed(run, events))
      violations.push({
        kind: 'other',
        text: `${key}: ${plan ? 'plan ' : ''}run ${run.runId} is ${run.status} at the end ${JSON.stringify(run.error ?? {})}`,
      });
    if (ended.length !== 1)
      violations.push({
        kind: 'other',
        text: `${key}: run ${run.runId} has ${ended.length} run.ended events`,
      });
    const [event] = ended;
    if (event?.type === 'run.ended' && event.status !== run.status)
      violations.push({
        kind: 'other',
        text: `${key}: run ${run.runId} is ${run.status}, its run.ended says ${event.status}`,
      });
    violations.push(...checkCut(key, run, events, tally));
  }
  return violations;
}

/** How many times a run resumed after a kill (its `run.resumed` events that name a reason). */
export function resumesOf(events: readonly RuntimeEvent[], runId: string): number {
  return events.filter(
    (event) => event.type === 'run.resumed' && event.runId === runId && event.reason !== undefined,
  ).length;
}

/**
 * A run a kill cut (a chat run or a plan run) resumes and ends as any run (completed, failed on a step in doubt,
 * or interrupted by a message); it is crashed only after its 2 resumes. A run no kill cut never resumes nor
 * crashes.
 */
function checkCut(key: string, run: RunRecord, events: readonly RuntimeEvent[], tally: Tally): Violation[] {
  const cut = tally.leftOpen.has(run.runId);
  const resumes = resumesOf(events, run.runId);
  const crashed = run.status === 'crashed';
  let allowed: boolean;
  if (!cut) allowed = !crashed && resumes === 0;
  else allowed = crashed ? resumes === 2 : true;
  if (allowed) return [];
  const why = cut ? `a kill left it open and it resumed ${resumes} times` : 'no kill left it open';
  return [{ kind: 'other', text: `${key}: run ${run.runId} is ${run.status}, but ${why}` }];
}

/** Every way one session's runs overlap, stay open or end in a way the workload does not allow. */
export function checkRuns(
  key: string,
  runs: readonly RunRecord[],
  events: readonly RuntimeEvent[],
  tally: Tally,
): Violation[] {
  return [
    ...checkChatOverlaps(key, events),
    ...checkWorkOverlaps(key, events),
    ...checkEndings(key, runs, events, tally),
  ];
}

/**
 * Plans whose executePlan / approvePlan answered `completed` must be completed in the ledger; one answered `aborted`
 * was interrupted by a message.
 */
export function checkPlanAnswers(runs: ReadonlyMap<string, RunRecord>, tally: Tally): Violation[] {
  const violations: Violation[] = [];
  for (const [id, answer] of tally.plans) {
    const run = runs.get(answer.runId);
    if (answer.status === 'completed' && run?.status !== 'completed')
      violations.push({
        kind: 'lost',
        text: `plan ${id} answered completed, but run ${answer.runId} is ${run?.status}`,
      });
    // An interrupting message aborts a running plan: its answer says `aborted`, its run records `interrupted`.
    if (answer.status === 'aborted' && run !== undefined && run.status !== 'interrupted')
      violations.push({
        kind: 'other',
        text: `plan ${id} answered aborted, but run ${answer.runId} is ${run.status}`,
      });
    if (!['completed', 'awaiting_approval', 'rejected_busy', 'aborted'].includes(answer.status))
      violations.push({ kind: 'other', text: `plan ${id} answered ${answer.status}` });
  }
  return violations;
}
