import { z } from 'zod';
import { approvalIdOfCall, pausedPlanToRestore } from './session-pause.js';
import { RuntimeError, runStatuses, type RunStatus, type Clock, createDeferred } from '../core/index.js';
import type { Ledger, RunRecord, ToolCallKind, TranscriptFork, TurnRecord } from '../ledger/index.js';
import { parsePlan, planStepIds, rootStepId } from '../plans/index.js';
import { type RuntimeInternals, assertOpen, sessionScopeOf } from './runtime-internals.js';
import { sessionStatus, type SessionStatus } from './session-runs.js';
import { parseSessionKey } from './inbound-message.js';
import type { SessionRegistry } from './session-registry.js';
import { subagentDepth } from '../policies/index.js';
import {
  closeCrashedRuns,
  defaultRecoveryPolicy,
  recoverOpenRuns,
  type RecoveryPolicy,
  resumeCrashedPlan,
} from '../runner/index.js';
import type { EventBus } from '../events/index.js';

/** One session as `runtime.sessions()` lists it: its key, where it stands, and when its record last changed. */
export interface SessionSummary extends SessionStatus {
  readonly key: string;
  /** When the session's record was last written (ms since the epoch); undefined for a session not stored yet. */
  readonly updatedAt?: number;
}

/** A page of sessions, by key; `next` is the `after` of the next page (absent on the last one). */
export interface SessionPage {
  readonly sessions: readonly SessionSummary[];
  readonly next?: string;
}

/** The largest page `runtime.sessions()` answers. */
export const sessionPageLimit = 500;

const pageSchema = z
  .object({
    /** Only keys after this one (the `next` of the previous page). */
    after: z.string().optional(),
    /** At most this many sessions. @default 100 */
    limit: z.int().min(1).max(sessionPageLimit).optional(),
  })
  .strict();

/**
 * Where a page's statuses come from: this process's sessions by default, each session's holder on a cluster
 * worker (the answers in `keys`' order).
 */
export type StatusesOf = (keys: readonly string[]) => Promise<readonly SessionStatus[]>;

/** What `runtime.sessions()` takes. */
export type SessionPageOptions = z.input<typeof pageSchema>;

/**
 * A call waiting for an operator (`approval`) or for a result from outside (`deferred`), in any session. A step of
 * a paused plan run is one too (`planStep: true`, its step id as `toolCallId`, the args the plan gives it, and the
 * plan run's start as `requestedAt`): approve or reject it like a call, or with `approvePlan`.
 */
export interface PendingCall {
  readonly sessionKey: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly kind: Exclude<ToolCallKind, 'ran'>;
  readonly requestedAt: number;
  /** The request it waits on: pass it to `approve({ approvalId })` / `approvePlan({ approvalIds })`. */
  readonly approvalId: string;
  /** Present on a step of a paused plan run (answered with `approvePlan`, never edited). */
  readonly planStep?: true;
}

/**
 * A page of the sessions the ledger holds and the live ones not stored yet, ordered by key. A bad option is
 * refused (`invalid_input`).
 */
export async function listSessionPage(
  internals: RuntimeInternals,
  options: SessionPageOptions = {},
  statusesOf: StatusesOf = (keys) => Promise.resolve(keys.map((key) => sessionStatus(internals, key))),
): Promise<SessionPage> {
  const parsed = pageSchema.safeParse(options);
  if (!parsed.success) throw new RuntimeError('invalid_input', `sessions: ${z.prettifyError(parsed.error)}`);
  const { after, limit = 100 } = parsed.data;
  // One more than the page from the ledger (keys only, no snapshots), merged with the live sessions not stored
  // yet: the first `limit` keys of the union are the page, and a key beyond them says there is a next one.
  const stored = await internals.services.ledger.listSessionKeys({ after, limit: limit + 1 });
  const updatedAt = new Map<string, number | undefined>(
    stored.map((entry) => [entry.sessionKey, entry.updatedAt]),
  );
  for (const live of internals.registry.all())
    if (!updatedAt.has(live.key) && (after === undefined || live.key > after))
      updatedAt.set(live.key, undefined);
  const keys = [...updatedAt.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const pageKeys = keys.slice(0, limit);
  const statuses = await statusesOf(pageKeys);
  const page = pageKeys.map((key, index): SessionSummary => {
    const at = updatedAt.get(key);
    const status = statuses[index] ?? sessionStatus(internals, key);
    return { key, ...status, ...(at === undefined ? {} : { updatedAt: at }) };
  });
  const last = page.at(-1);
  return keys.length > limit && last !== undefined ? { sessions: page, next: last.key } : { sessions: page };
}

/**
 * The steps a paused plan run waits for, as pending calls: what the session's record says it waits for (see
 * `pausedPlanToRestore`), each with the args its plan gives it. None when the run is no longer the session's pause.
 */
async function pausedPlanSteps(ledger: Ledger, run: RunRecord): Promise<PendingCall[]> {
  const { sessionKey, runId } = run;
  const [state, record] = await Promise.all([ledger.loadSession(sessionKey), ledger.getPlan(runId)]);
  const held = await pausedPlanToRestore(ledger, sessionKey, state);
  if (held?.runId !== runId || record === undefined) return [];
  let argsOf: (stepId: string) => unknown = () => ({});
  try {
    const plan = parsePlan(record.plan);
    const ids = planStepIds(plan);
    argsOf = (stepId) => plan.steps.find((step) => step.id === rootStepId(stepId, ids))?.args ?? {};
  } catch {
    // A plan record that no longer parses is refused when the plan is approved; its steps are still listed.
  }
  return held.steps.map((step) => ({
    sessionKey,
    runId,
    toolCallId: step.stepId,
    approvalId: step.approvalId ?? step.stepId,
    tool: step.tool,
    args: argsOf(step.stepId),
    kind: 'approval',
    requestedAt: run.startedAt,
    planStep: true,
  }));
}

/** Every call of a paused run still waiting for an approval or a supplied result, across sessions. */
export async function listPendingCalls(internals: RuntimeInternals): Promise<PendingCall[]> {
  const { ledger } = internals.services;
  const runs = await ledger.listPausedRuns();
  const calls = await Promise.all(
    runs.map(async (run): Promise<PendingCall[]> => {
      if (run.provider === 'plan' && run.status === 'awaiting_approval') return pausedPlanSteps(ledger, run);
      return (await ledger.listToolCalls(run.runId)).flatMap((call): PendingCall[] =>
        call.status === 'pending' && call.kind !== 'ran'
          ? [
              {
                sessionKey: call.sessionKey,
                runId: call.runId,
                toolCallId: call.toolCallId,
                approvalId: approvalIdOfCall(call),
                tool: call.tool,
                args: call.args,
                kind: call.kind,
                requestedAt: call.requestedAt,
              },
            ]
          : [],
      );
    }),
  );
  return calls.flat();
}

/** Options of `runtime.fork`: the parent's run the fork is taken after (default: its last ended run). */
export interface ForkOptions {
  readonly upToRunId?: string;
}

const ended = new Set<string>(runStatuses);

function isEnded(run: RunRecord): run is RunRecord & { status: RunStatus } {
  return ended.has(run.status);
}

/** Check the fork's arguments: two different valid keys, and `upToRunId` a string when given. */
function parseFork(parentKey: unknown, childKey: unknown, options: unknown): [string, string, ForkOptions] {
  const parent = parseSessionKey(parentKey);
  const child = parseSessionKey(childKey);
  if (parent === child)
    throw new RuntimeError('invalid_input', 'fork: the child key must differ from the parent key');
  if (options === null || typeof options !== 'object') {
    throw new RuntimeError('invalid_input', 'fork: options must be an object');
  }
  const { upToRunId } = options as { upToRunId?: unknown };
  if (upToRunId !== undefined && (typeof upToRunId !== 'string' || upToRunId === '')) {
    throw new RuntimeError('invalid_input', 'fork: upToRunId must be a run id');
  }
  return [parent, child, upToRunId === undefined ? {} : { upToRunId }];
}

/** Whether the ledger (or the registry) knows anything of a session: a record, events, messages, turns, runs. */
async function sessionExists(internals: RuntimeInternals, key: string): Promise<boolean> {
  if (internals.registry.live(key) !== undefined) return true;
  const { ledger } = internals.services;
  const state = await ledger.loadSession(key);
  if (state.record !== undefined || state.lastSeq > 0 || state.lastOrder > 0) return true;
  if ((await ledger.getFork(key)) !== undefined) return true;
  if ((await ledger.listTurns(key, { last: 1 })).length > 0) return true;
  return (await ledger.listRuns(key)).length > 0;
}

/** The parent's run the fork is taken after: the one named (it must have ended) or the last that ended. */
function forkPoint(runs: readonly RunRecord[], upToRunId: string | undefined): number {
  if (upToRunId === undefined) return runs.findLastIndex(isEnded);
  const index = runs.findIndex((run) => run.runId === upToRunId);
  const run = runs[index];
  if (run === undefined)
    throw new RuntimeError('invalid_input', `fork: ${upToRunId} is not a run of the parent`);
  if (!isEnded(run)) throw new RuntimeError('invalid_input', `fork: run ${upToRunId} has not ended`);
  return index;
}

/**
 * How many of the parent's turns the fork inherits: everything up to and including the chosen run's turns (the
 * parent's own inherited part too), never a turn of a run still open or started after it.
 */
function inheritedTurns(turns: readonly TurnRecord[], runs: readonly RunRecord[], point: number): number {
  const excluded = new Set(
    runs.filter((run, index) => index > point || !isEnded(run)).map((run) => run.runId),
  );
  for (let index = turns.length - 1; index >= 0; index--) {
    if (!excluded.has((turns[index] as TurnRecord).runId)) return index + 1;
  }
  return 0;
}

/** Work out and record the fork of `parent` as `child`; the record is one row whatever the parent's length. */
async function recordFork(ledger: Ledger, parent: string, child: string, at: number, options: ForkOptions) {
  const runs = await ledger.listRuns(parent);
  const point = forkPoint(runs, options.upToRunId);
  const turns = inheritedTurns(await ledger.listTurns(parent), runs, point);
  const upToRunId = runs[point]?.runId;
  const fork: TranscriptFork = {
    sessionKey: child,
    parentKey: parent,
    turns,
    ...(upToRunId === undefined ? {} : { upToRunId }),
    at,
  };
  await ledger.forkTranscript(fork);
  return fork;
}

/**
 * Create `childKey` as a fork of `parentKey`: its transcript starts as the parent's up to the fork point (stored by
 * reference), without the parent's queue, pauses or dedupe window. Unknown parent: `not_found`; a child key already
 * in use: `invalid_input`; nothing is written either way.
 */
export async function forkSession(
  internals: RuntimeInternals,
  parentKey: unknown,
  childKey: unknown,
  options: unknown = {},
): Promise<TranscriptFork> {
  assertOpen(internals);
  const [parent, child, parsed] = parseFork(parentKey, childKey, options);
  await internals.ready;
  if (!(await sessionExists(internals, parent))) {
    throw new RuntimeError('not_found', `fork: no session ${parent}`);
  }
  if (await sessionExists(internals, child)) {
    throw new RuntimeError('invalid_input', `fork: session ${child} already exists`);
  }
  const { ledger, clock } = internals.services;
  return recordFork(ledger, parent, child, clock.now(), parsed);
}

/**
 * Cancel the tasks of subagent sessions that never started: the parent run waiting for them crashed (and was closed
 * `crashed` above), so nobody would read their answer.
 */
async function cancelOrphans(ledger: Ledger, keys: readonly string[], onError: (error: unknown) => void) {
  for (const key of keys) {
    try {
      const { pending } = await ledger.loadSession(key);
      const ids = pending.map((message) => message.messageId);
      await ledger.updateMessages(key, ids, { status: 'cancelled' });
    } catch (error) {
      onError(error);
    }
  }
}

/**
 * Startup recovery. Runs a crash left open resume from their last durable boundary (`run.resumed`; their
 * sessions hold them when hydrated), or, with `recovery.crashedRuns: 'close'`, past their resumes or their age,
 * are closed as `crashed` with the text they had streamed and a `run.ended` event, written in one synchronous
 * stretch so they commit together (a crash during recovery leaves the run open for the next start, never closed
 * without its event); their messages count as consumed. Then every session with a resumed run, messages still to
 * run or a paused run is hydrated, which queues them in their original order and drains; then a resumed plan run
 * goes on in its session (`resumeCrashedPlan`). Whatever cannot be read (a corrupt row) is reported and skipped:
 * the other sessions are served.
 */
export async function recoverAtStart(
  deps: {
    ledger: Ledger;
    clock: Clock;
    bus: EventBus;
    registry: SessionRegistry;
    onError: (error: unknown) => void;
    /** Subagents are enabled: a child session's pending task lost its parent and is cancelled, not run. */
    subagents?: boolean;
    /** What becomes of runs left open. @default resume, at most twice, runs younger than a day */
    recovery?: RecoveryPolicy;
  },
  /** The runtime's internals, to run resumed plan runs on. @default none: plan runs a crash cut close `crashed` */
  internals?: { get(): RuntimeInternals },
): Promise<void> {
  const { ledger, bus, registry, onError } = deps;
  bus.seek(await ledger.lastCursor());
  const recovered = await recoverOpenRuns(
    { ledger, clock: deps.clock, events: bus, onError },
    {
      policy: deps.recovery ?? defaultRecoveryPolicy,
      reason: 'crash',
      resumePlans: internals !== undefined,
    },
  );
  const plans = recovered.resumed.filter((run) => run.provider === 'plan');
  // Each resumed run's session hydrates holding it (a plan run: held as running until resumePlans runs it on).
  for (const run of recovered.resumed) registry.resumeOnLoad(run);
  const crashed = recovered.sessions;
  const withPending = await ledger.listSessionsWithPending().catch((error: unknown) => {
    onError(error);
    return [] as string[];
  });
  // A child whose run resumes is not an orphan: its run goes on (under its parent's spawn call).
  const resumedKeys = new Set(recovered.resumed.map((run) => run.sessionKey));
  const orphans =
    deps.subagents === true
      ? withPending.filter((key) => subagentDepth(key) > 0 && !resumedKeys.has(key))
      : [];
  await cancelOrphans(ledger, orphans, onError);
  const pending = withPending.filter((key) => !orphans.includes(key));
  // Paused runs come back paused (their expiry timers re-armed); they are not crashed.
  const paused = await ledger.listPausedRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  for (const key of new Set([...crashed, ...pending, ...paused.map((run) => run.sessionKey)])) {
    try {
      await registry.acquire(key);
    } catch (error) {
      onError(error);
    }
  }
  if (internals !== undefined) await resumePlans(internals.get(), plans, onError);
}

/**
 * Run on each plan run a crash cut, in its session (hydrated above): each holds its session and is in its lane
 * before recovery ends, ahead of any plan or message sent after the restart. A failure is reported, never thrown.
 */
async function resumePlans(
  internals: RuntimeInternals,
  runs: readonly RunRecord[],
  onError: (error: unknown) => void,
): Promise<void> {
  for (const run of runs) {
    try {
      const session = await internals.registry.acquire(run.sessionKey);
      resumeCrashedPlan(sessionScopeOf(internals, session), run).catch(onError);
    } catch (error) {
      onError(error);
    }
  }
}

/**
 * Reconcile after a ledger fault, as a restart of the sessions that were live reconciles them: their actors are
 * stopped (no run of theirs can start or write after this, and an `acquire` of them waits), the runs the fault
 * stopped settle, the runs the ledger still holds open for them are closed as `crashed` with the text that was
 * recorded (as at startup), and each session hydrates from the inbox: its pending messages queue again in their
 * order and run once; consumed ones do not run again. The actors are stopped in the synchronous part.
 */
export function reconcileAfterFault(deps: {
  ledger: Ledger;
  clock: Clock;
  bus: EventBus;
  registry: SessionRegistry;
  onError: (error: unknown) => void;
  /** Resolves once every run the fault stopped settled. */
  runsSettled: () => Promise<void>;
}): Promise<void> {
  const { registry, onError } = deps;
  const rebuilt = createDeferred<void>();
  const keys = registry.suspendAll(rebuilt.promise);
  const work = async (): Promise<void> => {
    try {
      await deps.runsSettled();
      await deps.bus.flushed();
      await closeCrashedRuns(
        { ledger: deps.ledger, clock: deps.clock, events: deps.bus, onError },
        new Set(keys),
      );
    } finally {
      rebuilt.resolve();
    }
    for (const key of keys) {
      try {
        await registry.acquire(key);
      } catch (error) {
        onError(error);
      }
    }
  };
  return work();
}
