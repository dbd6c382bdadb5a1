import { RuntimeError } from '../core/index.js';
import { needsApproval } from '../policies/index.js';
import { expandStep } from './plan-expansion.js';
import type { PlanGraph } from './plan-graph.js';
import type { Plan, PlanOptions, PlanStep } from './plan-schema.js';
import { resolveArgs } from './placeholders.js';
import type { StepResult } from './step-result.js';
import { cancelledError, failStep, runStep, type StepRunContext, type StepUnit } from './step-runner.js';

/** How a plan run stopped: it ran out of work, failed fast, was aborted, or waits for approvals. */
export type PlanStopStatus = 'completed' | 'failed' | 'aborted' | 'awaiting_approval';

/** What one execution of a plan (a first run or a resume) ends with. */
export interface PlanOutcome {
  readonly status: PlanStopStatus;
  /** Every step's result in plan order (an expanded step's children in its place); none for steps that wait. */
  readonly results: readonly StepResult[];
  /** Step ids (plan steps or children) that wait for an operator's approval. */
  readonly awaiting: readonly string[];
}

/** One execution of a plan: what it runs, what was approved, and what earlier executions recorded. */
export interface PlanExecution {
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly options: PlanOptions;
  /** Plan step or child ids an operator approved. */
  readonly approved: ReadonlySet<string>;
  /** Results recorded by earlier executions (never run again), and rejections. */
  readonly previous: readonly StepResult[];
  /** Tool names or globs that need approval whatever their risk. */
  readonly alwaysApprove: readonly string[];
  /** Step ids a crash cut while they ran (in doubt): they wait for an operator whatever was approved. @default none */
  readonly inDoubt?: ReadonlySet<string>;
  /** Called once per step that waits for approval, before the plan stops. */
  readonly onAwaiting: (unit: StepUnit, planStepId: string) => void;
  /** Called with each result of a step that ran in this execution, as it finishes (for the ledger). */
  readonly onResult: (result: StepResult) => void;
}

/**
 * Run a plan as a DAG: ready steps (dependencies done) start in plan order, at most `maxParallel` units at once;
 * a step whose args expand (`[*]`) or fan out over an expanded step becomes one unit per item. A unit that needs
 * approval (`approval` mode: every step not approved; `auto`: high-risk or listed tools not approved) waits; the
 * plan stops `awaiting_approval` once nothing else can run. A failed step blocks what depends on it; with
 * `failFast` it stops the plan. Resolves once nothing runs; never rejects.
 */
export function executePlanSteps(context: StepRunContext, execution: PlanExecution): Promise<PlanOutcome> {
  return new Promise<PlanOutcome>((resolve) => {
    new PlanScheduler(context, execution, resolve).start();
  });
}

/** The reason running steps are aborted with when `failFast` stops the plan. */
function failFastReason(): Error {
  return new RuntimeError('cancelled', 'an earlier step failed (failFast)');
}

class PlanScheduler {
  private readonly results = new Map<string, StepResult>();
  private readonly children = new Map<string, string[]>();
  private readonly waitingDeps = new Map<string, number>();
  private readonly stepDone = new Set<string>();
  private readonly stepFailed = new Set<string>();
  private readonly unitsLeft = new Map<string, number>();
  private readonly ready: number[] = [];
  private readonly units: { unit: StepUnit; planStepId: string }[] = [];
  private readonly awaiting: string[] = [];
  private running = 0;
  private stopped: 'failFast' | undefined;
  private finished = false;
  /** Aborts running steps when `failFast` stops the plan; joined with the caller's signal for each step. */
  private readonly failFast = new AbortController();
  private readonly context: StepRunContext;

  constructor(
    private readonly outer: StepRunContext,
    private readonly execution: PlanExecution,
    private readonly resolve: (outcome: PlanOutcome) => void,
  ) {
    for (const result of execution.previous) this.results.set(result.stepId, result);
    this.context = { ...outer, signal: AbortSignal.any([outer.signal, this.failFast.signal]) };
  }

  start(): void {
    const { graph } = this.execution;
    for (const id of graph.ids) {
      const count = graph.dependencies(id).length;
      this.waitingDeps.set(id, count);
      if (count === 0) this.ready.push(graph.indexOf(id));
    }
    this.pump();
  }

  private step(index: number): PlanStep {
    return this.execution.plan.steps[index] as PlanStep;
  }

  /** Start what can start; finish when nothing runs and nothing can start. */
  private pump(): void {
    while (!this.halted() && (this.ready.length > 0 || this.units.length > 0)) {
      if (this.units.length > 0) {
        if (this.running >= this.execution.options.maxParallel) break;
        const next = this.units.shift();
        if (next !== undefined) this.launch(next.unit, next.planStepId);
        continue;
      }
      this.ready.sort((a, b) => a - b);
      const index = this.ready.shift();
      if (index !== undefined) this.open(this.step(index));
    }
    if (this.running === 0 && !this.finished) this.finish();
  }

  private halted(): boolean {
    return this.context.signal.aborted;
  }

  /** A plan step whose dependencies are done: reuse its result, wait for approval, or expand it into units. */
  private open(step: PlanStep): void {
    const { execution } = this;
    const recorded = this.results.get(step.id);
    if (recorded !== undefined) return this.settleStep(step.id, recorded.success);
    if (execution.options.mode === 'approval' && !execution.approved.has(step.id)) {
      this.wait({ id: step.id, tool: step.tool, args: step.args }, step.id);
      return;
    }
    const lookup = (id: string) => this.results.get(id);
    const expansion = expandStep(step, lookup, (id) => this.children.get(id), execution.plan);
    if (!expansion.ok) {
      const result = failStep(this.context, step, expansion.error, this.notRun());
      this.record(result);
      return this.settleStep(step.id, false);
    }
    if (expansion.expanded) {
      this.children.set(
        step.id,
        expansion.steps.map((child) => child.id),
      );
      if (expansion.steps.length === 0) {
        this.results.set(step.id, {
          stepId: step.id,
          success: true,
          data: [],
          metadata: this.notRun(),
        });
        return this.settleStep(step.id, true);
      }
    }
    this.unitsLeft.set(step.id, expansion.steps.length);
    for (const unit of expansion.steps) this.units.push({ unit, planStepId: step.id });
  }

  /** Start one unit: reuse its recorded result, wait for approval, or resolve its args and run it. */
  private launch(unit: StepUnit, planStepId: string): void {
    const recorded = this.results.get(unit.id);
    if (recorded !== undefined) return this.settleUnit(planStepId, recorded.success);
    if (this.needsApproval(unit, planStepId)) return this.wait(unit, planStepId);
    const resolved = resolveArgs(unit.args, (id) => this.results.get(id), this.execution.plan);
    if (!resolved.ok) {
      const result = failStep(this.context, unit, resolved.error, this.notRun());
      this.record(result);
      return this.settleUnit(planStepId, false);
    }
    this.running++;
    void runStep(this.context, { ...unit, args: resolved.args }).then((result) => {
      this.running--;
      this.record(result);
      this.settleUnit(planStepId, result.success);
      this.pump();
    });
  }

  private needsApproval(unit: StepUnit, planStepId: string): boolean {
    const { approved, options, alwaysApprove, inDoubt } = this.execution;
    if (inDoubt?.has(unit.id) === true) return true;
    if (approved.has(unit.id) || approved.has(planStepId)) return false;
    if (options.mode === 'approval') return true;
    const tool = this.context.tools.get(unit.tool);
    if (tool === undefined) return false;
    const remembered = { run: [], session: [] };
    return needsApproval({ tool: tool.name, risk: tool.risk, alwaysApprove, remembered });
  }

  private wait(unit: StepUnit, planStepId: string): void {
    this.awaiting.push(unit.id);
    this.execution.onAwaiting(unit, planStepId);
  }

  private record(result: StepResult): void {
    this.results.set(result.stepId, result);
    this.execution.onResult(result);
    if (!result.success && this.execution.options.failFast && this.stopped === undefined) {
      this.stopped = 'failFast';
      this.failFast.abort(failFastReason());
    }
  }

  private settleUnit(planStepId: string, success: boolean): void {
    if (!success) this.stepFailed.add(planStepId);
    const left = (this.unitsLeft.get(planStepId) ?? 1) - 1;
    this.unitsLeft.set(planStepId, left);
    if (left === 0) this.settleStep(planStepId, !this.stepFailed.has(planStepId));
  }

  /** A plan step is done: its dependents that wait for nothing else become ready. */
  private settleStep(planStepId: string, success: boolean): void {
    if (!success) {
      this.stepFailed.add(planStepId);
      return;
    }
    this.stepDone.add(planStepId);
    const { graph } = this.execution;
    for (const dependent of graph.dependents(planStepId)) {
      const left = (this.waitingDeps.get(dependent) ?? 1) - 1;
      this.waitingDeps.set(dependent, left);
      if (left === 0) this.ready.push(graph.indexOf(dependent));
    }
  }

  private finish(): void {
    this.finished = true;
    const status: PlanStopStatus = this.outer.signal.aborted
      ? 'aborted'
      : this.stopped === 'failFast'
        ? 'failed'
        : this.awaiting.length > 0
          ? 'awaiting_approval'
          : this.stepFailed.size > 0
            ? 'failed'
            : 'completed';
    const results = status === 'awaiting_approval' ? this.collect(false) : this.collect(true);
    this.resolve({ status, results, awaiting: status === 'awaiting_approval' ? this.awaiting : [] });
  }

  /** Results in plan order; with `complete`, steps that never ran get a `cancelled` result saying why. */
  private collect(complete: boolean): StepResult[] {
    const { plan } = this.execution;
    const results: StepResult[] = [];
    const never = this.notRun();
    for (const step of plan.steps) {
      const ids = this.children.get(step.id);
      const own = this.results.get(step.id);
      if (ids !== undefined && ids.length > 0) {
        for (const id of ids) {
          const child = this.results.get(id);
          if (child !== undefined) results.push(child);
          else if (complete)
            results.push({ stepId: id, success: false, error: this.whyNot(step.id), metadata: never });
        }
      } else if (own !== undefined) results.push(own);
      else if (complete)
        results.push({ stepId: step.id, success: false, error: this.whyNot(step.id), metadata: never });
    }
    return results;
  }

  /** The metadata of a step that did not run (or failed before its tool was called). */
  private notRun(): StepResult['metadata'] {
    return { executionTime: 0, retries: 0, startedAt: this.context.clock.now() };
  }

  private whyNot(stepId: string) {
    if (this.outer.signal.aborted) return cancelledError('the plan was aborted');
    if (this.stopped === 'failFast') return cancelledError('an earlier step failed (failFast)');
    const failed = this.execution.graph.dependencies(stepId).find((id) => !this.stepDone.has(id));
    return cancelledError(failed === undefined ? 'not run' : `dependency "${failed}" did not succeed`);
  }
}
