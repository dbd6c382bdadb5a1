import type { PlanGraph } from '../plans/index.js';
import { previewPlan } from '../plans/index.js';
import type { Plan, PlanOptions } from '../plans/index.js';
import type { PlanRecord } from '../ledger/index.js';
import { runPlanSegment, type PlanRunResult } from './plan-run.js';
import { assertAccepting, assertNoPausedRun, type SessionScope } from './session-scope.js';
import type { SessionControl } from './session-control.js';

const usage = { inputTokens: 0, outputTokens: 0 };

/** A plan run to start: its id, the validated plan and its graph, and the options. */
export interface PlanStart {
  readonly runId: string;
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly options: PlanOptions;
}

/**
 * Run `body` with the plan run held by the session (from before its machine starts it): messages queue. The plan lets the session go when it ends; one that fails before it paused or
 * ended (refused in the lane, the runtime closing) lets it go here.
 */
export async function holdingSession<T>(
  control: SessionControl,
  runId: string,
  body: () => Promise<T>,
): Promise<T> {
  control.holdPlan(runId);
  try {
    return await body();
  } catch (error) {
    if (control.pausedPlan()?.runId !== runId) control.releasePlan(runId);
    throw error;
  }
}

/**
 * Start a plan run as a run of the session, which its machine starts when no other run is active: recorded and
 * announced, then executed (or, in `preview` mode, only resolved and validated).
 */
export async function startPlanRun(scope: SessionScope, start: PlanStart): Promise<PlanRunResult> {
  const { services, control } = scope;
  const { runId, plan, graph, options } = start;
  assertNoPausedRun(control, 'executePlan');
  return holdingSession(control, runId, () =>
    control.run('plan', runId, async (signal): Promise<PlanRunResult> => {
      // Waited behind a run while the runtime began closing: nothing was recorded, nothing runs.
      assertAccepting(services);
      assertNoPausedRun(control, 'executePlan');
      const startedAt = await openPlanRun(scope, start);
      if (options.mode === 'preview') return previewRun(scope, start, startedAt);
      const approved = new Set(options.approvedSteps ?? []);
      const first = {
        runId,
        plan,
        graph,
        options,
        approved,
        previous: [],
        nextResult: 1,
        nextCompensation: 1,
      };
      return runPlanSegment(scope, { ...first, startedAt }, signal);
    }),
  );
}

/** Record a new plan run (its definition and the open run) and announce it; resolves its start time. */
async function openPlanRun(scope: SessionScope, start: PlanStart): Promise<number> {
  const { ledger, clock } = scope.services;
  const { runId, plan, options } = start;
  const sessionKey = scope.control.key;
  const startedAt = clock.now();
  const approvedSteps = options.approvedSteps ?? [];
  const record: PlanRecord = { runId, sessionKey, plan, options, approvedSteps, createdAt: startedAt };
  const opened = { runId, sessionKey, messageIds: [], provider: 'plan', model: options.mode, startedAt };
  await Promise.all([
    ledger.putPlan(record),
    ledger.openRun({ ...opened, status: 'running', usage, text: '' }),
  ]);
  scope.control.emit({ type: 'run.started', runId, messageIds: [], provider: 'plan', model: options.mode });
  return startedAt;
}

/** A preview run: resolve and validate every step without executing, then end the run completed. */
async function previewRun(scope: SessionScope, start: PlanStart, startedAt: number): Promise<PlanRunResult> {
  const { services, control } = scope;
  const { runId } = start;
  const tools = services.toolsFor(control.key);
  const results = previewPlan(start.plan, start.graph, tools, services.alwaysApprove, startedAt);
  const text = `plan preview: ${results.filter((result) => result.success).length} of ${results.length} steps valid`;
  const endedAt = services.clock.now();
  await services.ledger.closeRun(runId, { status: 'completed', endedAt, text, usage, cost: 0 });
  const summary = { runId, status: 'completed' as const, text, messageIds: [], startedAt, endedAt };
  control.releasePlan(runId, summary);
  control.emit({ type: 'run.ended', runId, status: 'completed', text, usage, durationMs: 0 });
  return { runId, status: 'preview', results };
}
