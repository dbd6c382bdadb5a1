import { z } from 'zod';
import { pausedPlanToRestore } from './session-pause.js';
import { RuntimeError } from '../core/index.js';
import type { Ledger, RunRecord, ToolCallKind } from '../ledger/index.js';
import { parsePlan, planStepIds, rootStepId } from '../plans/index.js';
import type { RuntimeInternals } from './runtime-internals.js';
import { sessionStatus, type SessionStatus } from './session-abort.js';

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
