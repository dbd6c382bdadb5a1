import { parsePlan } from '../../src/plans/plan-schema.js';
import type { Plan } from '../../src/plans/plan-schema.js';
import type { StepLookup, StepResult } from '../../src/plans/step-result.js';

interface StepInput {
  readonly id: string;
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  readonly dependsOn?: string[];
}

/** A parsed plan whose steps call tool `t` unless they say otherwise. */
export function planOf(...steps: StepInput[]): Plan {
  return parsePlan({ steps: steps.map((step) => ({ tool: 't', ...step })) });
}

const metadata = { executionTime: 5, retries: 0, startedAt: 1_000 };

/** A successful result carrying `data`. */
export function succeeded(stepId: string, data: unknown): StepResult {
  return { stepId, success: true, data, metadata };
}

/** A failed result. */
export function failed(stepId: string, message = 'boom'): StepResult {
  return { stepId, success: false, error: { code: 'tool_failed', message }, metadata };
}

/** A lookup over the given results, keyed by their step ids. */
export function lookupFrom(...results: StepResult[]): StepLookup {
  const byId = new Map(results.map((result) => [result.stepId, result]));
  return (stepId) => byId.get(stepId);
}

/** What `run` throws; fails the test when it returns. */
export function errorOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
