import type { PlanGraph } from './plan-graph.js';

/** Where each step of a running plan stands; ids not in the graph are ignored. */
export interface ScheduleState {
  readonly done: ReadonlySet<string>;
  readonly running: ReadonlySet<string>;
  readonly failed: ReadonlySet<string>;
}

/** Steps not yet started whose dependencies are all done, in plan order. */
export function readySteps(graph: PlanGraph, state: ScheduleState): string[] {
  return graph.ids.filter(
    (id) =>
      !state.done.has(id) &&
      !state.running.has(id) &&
      !state.failed.has(id) &&
      graph.dependencies(id).every((dependency) => state.done.has(dependency)),
  );
}

/** Steps that can never run because a step they depend on, directly or not, failed; in plan order. */
export function blockedSteps(graph: PlanGraph, failed: ReadonlySet<string>): string[] {
  const blocked = new Set<string>();
  const pending = [...failed].filter((id) => graph.indexOf(id) !== -1);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const dependent of graph.dependents(next)) {
      if (blocked.has(dependent) || failed.has(dependent)) continue;
      blocked.add(dependent);
      pending.push(dependent);
    }
  }
  return graph.ids.filter((id) => blocked.has(id));
}
