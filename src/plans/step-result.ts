import type { ErrorInfo } from '../core/index.js';

/** The outcome of one step, as placeholders of later steps see it and as results report it. */
export interface StepResult {
  readonly stepId: string;
  readonly success: boolean;
  readonly data?: unknown;
  readonly error?: ErrorInfo;
  readonly metadata: {
    readonly executionTime: number;
    readonly retries: number;
    readonly startedAt: number;
  };
}

/** Finds the result of a step by id; `undefined` when the step has not produced one. */
export type StepLookup = (stepId: string) => StepResult | undefined;
