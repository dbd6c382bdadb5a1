import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import { assertInputBounds } from '../core/index.js';

/** How a plan runs: `preview` resolves without executing, `approval` pauses for approval, `auto` runs. */
export const planModes = ['preview', 'approval', 'auto'] as const;
/** One of the plan modes. */
export type PlanMode = (typeof planModes)[number];

/** The characters a step id may use; ids are also what `$<id>` placeholders name. */
export const stepIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** One step of a plan: which tool to call, with which args, after which other steps. */
export const planStepSchema = z.strictObject({
  id: z.string().regex(stepIdPattern, 'must be 1 to 64 characters from A-Z, a-z, 0-9, "_" and "-"'),
  tool: z.string().min(1, 'must be a non-empty tool name'),
  /** JSON args; strings may hold placeholders. @default {} */
  args: z.record(z.string(), z.unknown()).default({}),
  /** Ids of steps that must succeed first, on top of the ones placeholders imply. */
  dependsOn: z.array(z.string()).optional(),
});

/** A plan: a non-empty list of steps, in plan order. */
export const planSchema = z.strictObject({
  steps: z.array(planStepSchema).min(1, 'a plan needs at least one step'),
});

/** How a plan is run. */
export const planOptionsSchema = z.strictObject({
  /** What running the plan does. @default 'auto' */
  mode: z.enum(planModes).default('auto'),
  /** Most steps running at once. @default 5 */
  maxParallel: z.number().int().min(1).max(64).default(5),
  /** Time limit of one attempt of one step. @default 30_000 */
  timeoutMs: z.number().int().min(1).max(3_600_000).default(30_000),
  /** Retries of a step after a transient failure. @default 3 */
  retries: z.number().int().min(0).max(10).default(3),
  /** First retry delay ceiling; each retry doubles it (full jitter, capped at 30 s). @default 500 */
  retryBaseMs: z.number().int().min(0).max(60_000).default(500),
  /** Stop starting steps after the first failure. @default false */
  failFast: z.boolean().default(false),
  /** Ids of steps already approved (resuming an `approval` plan, or high-risk steps in `auto`). */
  approvedSteps: z.array(z.string()).optional(),
});

/** A validated plan. */
export type Plan = z.output<typeof planSchema>;
/** A validated plan step. */
export type PlanStep = z.output<typeof planStepSchema>;
/** Plan options with every default filled in. */
export type PlanOptions = z.output<typeof planOptionsSchema>;
/** Plan options as callers pass them. */
export type PlanOptionsInput = z.input<typeof planOptionsSchema>;

function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${[what, ...issue.path.map(String)].join('.')}: ${issue.message}`,
  );
  throw new RuntimeError('invalid_input', problems.join('; '), {
    cause: parsed.error,
    details: { issues: problems },
  });
}

/**
 * Validate a plan; throws `invalid_input` naming each bad field (`plan.steps.1.id: …`), or the first value past the
 * input bounds (nested too deep, too large, text no ledger stores), checked before anything reads it.
 */
export function parsePlan(input: unknown): Plan {
  assertInputBounds('executePlan', input, 'plan');
  return parseOrThrow(planSchema, input, 'plan');
}

/** Validate plan options and fill in defaults (`undefined` means all defaults); throws `invalid_input`. */
export function parsePlanOptions(input: unknown): PlanOptions {
  assertInputBounds('executePlan', input, 'options');
  return parseOrThrow(planOptionsSchema, input ?? {}, 'options');
}
