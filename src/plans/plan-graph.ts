import { RuntimeError, isRuntimeError } from '../core/index.js';
import { findCycle } from './find-cycle.js';
import { referencedSteps } from './placeholders.js';
import type { Plan, PlanStep } from './plan-schema.js';

/** A plan's dependency graph, checked: unique ids, known dependencies, no cycle. */
export interface PlanGraph {
  /** Step ids in plan order. */
  readonly ids: readonly string[];
  /** A topological order; among steps that could go next, plan order decides. */
  readonly order: readonly string[];
  /** What `stepId` waits for (explicit `dependsOn` and placeholder references), in plan order. */
  dependencies(stepId: string): readonly string[];
  /** What waits for `stepId`, in plan order. */
  dependents(stepId: string): readonly string[];
  /** The step's position in the plan, `-1` if the plan has no such step. */
  indexOf(stepId: string): number;
}

function indexSteps(plan: Plan): Map<string, number> {
  const index = new Map<string, number>();
  for (const [position, step] of plan.steps.entries()) {
    const seen = index.get(step.id);
    if (seen !== undefined) {
      throw new RuntimeError(
        'invalid_input',
        `plan.steps.${position}.id: duplicate step id "${step.id}" (also plan.steps.${seen}.id)`,
        { details: { stepId: step.id } },
      );
    }
    index.set(step.id, position);
  }
  return index;
}

function implicitDependencies(step: PlanStep, plan: Plan): Set<string> {
  try {
    return referencedSteps(step.args, plan);
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    throw new RuntimeError(error.code, `step "${step.id}": ${error.message}`, {
      cause: error,
      details: { stepId: step.id },
    });
  }
}

function dependenciesOf(step: PlanStep, plan: Plan, index: ReadonlyMap<string, number>): number[] {
  const found = new Set<number>();
  for (const dependency of step.dependsOn ?? []) {
    const position = index.get(dependency);
    if (position === undefined) {
      throw new RuntimeError('invalid_input', `step "${step.id}" depends on unknown step "${dependency}"`, {
        details: { stepId: step.id, dependency },
      });
    }
    found.add(position);
  }
  for (const id of implicitDependencies(step, plan)) found.add(index.get(id) as number);
  return [...found].sort((left, right) => left - right);
}

/** Kahn's algorithm, always taking the earliest step in plan order among those whose dependencies are met. */
function topologicalOrder(dependencies: readonly (readonly number[])[], dependents: readonly number[][]) {
  const waiting = dependencies.map((list) => list.length);
  const ready = waiting.flatMap((count, position) => (count === 0 ? [position] : []));
  const order: number[] = [];
  while (ready.length > 0) {
    const next = ready.shift() as number;
    order.push(next);
    for (const dependent of dependents[next] ?? []) {
      waiting[dependent] = (waiting[dependent] ?? 0) - 1;
      if (waiting[dependent] !== 0) continue;
      const at = ready.findIndex((position) => position > dependent);
      ready.splice(at === -1 ? ready.length : at, 0, dependent);
    }
  }
  return order;
}

/**
 * Check a plan and build its graph. Throws `invalid_input` for a duplicate id, a `dependsOn` or `${…}` naming
 * an unknown step, and `plan_cycle` naming one cycle, `a -> b -> a` meaning a depends on b depends on a.
 */
export function buildPlanGraph(plan: Plan): PlanGraph {
  const index = indexSteps(plan);
  const ids = plan.steps.map((step) => step.id);
  const dependencies = plan.steps.map((step) => dependenciesOf(step, plan, index));
  const cycle = findCycle(dependencies)?.map((position) => ids[position] as string);
  if (cycle !== undefined) {
    throw new RuntimeError('plan_cycle', `plan has a dependency cycle: ${cycle.join(' -> ')}`, {
      details: { cycle },
    });
  }
  const dependents = ids.map((): number[] => []);
  for (const [position, list] of dependencies.entries()) {
    for (const dependency of list) dependents[dependency]?.push(position);
  }
  const toIds = (positions: readonly number[]) => positions.map((position) => ids[position] as string);
  const dependencyIds = dependencies.map(toIds);
  const dependentIds = dependents.map(toIds);
  const positionOf = (stepId: string): number => {
    const position = index.get(stepId);
    if (position === undefined) throw new RuntimeError('not_found', `the plan has no step "${stepId}"`);
    return position;
  };
  return {
    ids,
    order: toIds(topologicalOrder(dependencies, dependents)),
    dependencies: (stepId) => dependencyIds[positionOf(stepId)] ?? [],
    dependents: (stepId) => dependentIds[positionOf(stepId)] ?? [],
    indexOf: (stepId) => index.get(stepId) ?? -1,
  };
}
