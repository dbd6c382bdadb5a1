import type { Plan } from './plan-schema.js';

/** The id of the `index`-th step an expanded or fanned-out step becomes: `<stepId>-<index>`. */
export function childStepId(stepId: string, index: number): string {
  return `${stepId}-${index}`;
}

/** The ids of a plan's steps. */
export function planStepIds(plan: Plan): ReadonlySet<string> {
  return new Set(plan.steps.map((step) => step.id));
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
