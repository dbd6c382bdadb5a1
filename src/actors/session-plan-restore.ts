import type { Ledger, RunRecord, SessionState } from '../ledger/index.js';
import type { PlanHold, PlanStepWait, SessionContext } from './session-context.js';

/** The plan holds a saved snapshot recorded (none when it has none or is not a session snapshot). */
function savedPlans(snapshot: unknown): readonly PlanHold[] {
  if (typeof snapshot !== 'object' || snapshot === null || !('context' in snapshot)) return [];
  const plans: unknown = (snapshot.context as Partial<SessionContext> | null)?.plans;
  return Array.isArray(plans) ? (plans as PlanHold[]) : [];
}

/** The steps a paused plan waits for, from its latest `run.paused` event (tools from its approval requests). */
async function stepsFromEvents(ledger: Ledger, sessionKey: string, runId: string): Promise<PlanStepWait[]> {
  const events = (await ledger.readEvents({ sessionKey })).filter((event) => event.runId === runId);
  const tools = new Map<string, string>();
  let waiting: readonly string[] = [];
  for (const event of events) {
    if (event.type === 'approval.requested') tools.set(event.toolCallId, event.tool);
    if (event.type === 'run.paused') waiting = event.toolCallIds;
  }
  return waiting.map((stepId) => ({ stepId, tool: tools.get(stepId) ?? '' }));
}

/**
 * What hydrating a session reads from the ledger, with the paused plan run it holds (if any) and the run a crash
 * cut that it resumes (if any).
 */
export type HydrateState = SessionState & {
  readonly plan?: PlanHold | undefined;
  readonly resume?: RunRecord | undefined;
};

/**
 * The paused plan run a hydrated session holds, when the ledger's latest paused run of the session is a plan
 * (no agent run's calls wait): what it waits for comes from the saved snapshot, or, when the snapshot is older
 * than the pause (a crash before it was written), from the plan's recorded events.
 */
export async function pausedPlanToRestore(
  ledger: Ledger,
  sessionKey: string,
  state: SessionState,
): Promise<PlanHold | undefined> {
  const paused = state.paused;
  if (paused === undefined || paused.run.provider !== 'plan' || paused.run.status !== 'awaiting_approval')
    return undefined;
  if (paused.calls.some((call) => call.kind !== 'ran')) return undefined;
  const { runId } = paused.run;
  const saved = savedPlans(state.record?.snapshot).find(
    (plan) => plan.runId === runId && plan.state === 'awaiting_approval',
  );
  if (saved !== undefined) return saved;
  return { runId, state: 'awaiting_approval', steps: await stepsFromEvents(ledger, sessionKey, runId) };
}
