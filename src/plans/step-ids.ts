import type { Plan } from './plan-schema.js';

/** The id of the `index`-th step an expanded or fanned-out step becomes: `<stepId>-<index>`. */
export function childStepId(stepId: string, index: number): string {
  return `${stepId}-${index}`;
}

const idsByPlan = new WeakMap<Plan, ReadonlySet<string>>();

/** The ids of a plan's steps (built once per plan object: every placeholder parse asks for them). */
export function planStepIds(plan: Plan): ReadonlySet<string> {
  let ids = idsByPlan.get(plan);
  if (ids === undefined) {
    ids = new Set(plan.steps.map((step) => step.id));
    idsByPlan.set(plan, ids);
  }
  return ids;
}

const childSuffix = /^(.+)-\d+$/;

/**
 * The plan step `stepId` names or descends from (`fetch-1-0` → `fetch` when only `fetch` is a plan step);
 * `undefined` when it is neither. A plan id always wins over reading it as a child id.
 */
export function rootStepId(stepId: string, planIds: ReadonlySet<string>): string | undefined {
  let current = stepId;
  while (!planIds.has(current)) {
    const parent = childSuffix.exec(current)?.[1];
    if (parent === undefined) return undefined;
    current = parent;
  }
  return current;
}
