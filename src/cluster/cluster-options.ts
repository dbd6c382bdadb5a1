import { z } from 'zod';
import { RuntimeError } from '../core/index.js';

/** How fast a cluster notices a dead worker and a missed doorbell (docs/distributed.md). */
export interface ClusterTimingOptions {
  /** A worker that stops renewing its lease for this long loses its sessions. @default 10000 */
  leaseMs?: number | undefined;
  /** How often a worker renews its lease and its lane seats in use (a seat's share period too). @default leaseMs / 3 */
  renewMs?: number | undefined;
  /**
   * The longest a forwarded call or a freed lane seat waits when its NOTIFY was missed (a forwarded call's answer:
   * half of `leaseMs`, at most 5 s, at least this). @default 500
   */
  pollMs?: number | undefined;
  /** How often a worker looks for sessions with work that no live worker holds. @default 2000 */
  scanMs?: number | undefined;
}

/** Where a cluster worker's plan steps run: as jobs any worker may take, or in the plan's own run. */
export const planStepModes = ['jobs', 'inline'] as const;
/** One of the plan-step modes. */
export type PlanStepMode = (typeof planStepModes)[number];

/** True for a plan-step mode. */
export function isPlanStepMode(value: unknown): value is PlanStepMode {
  return (planStepModes as readonly unknown[]).includes(value);
}

/** Where a cluster's plan steps run (docs/distributed.md, "Plan steps as jobs"). */
export interface ClusterJobOptions {
  /**
   * `jobs`: a plan step is a job any worker of the cluster may run (the owner included); `inline`: this worker
   * runs its plans' steps itself. Either way it runs the jobs other workers queue. @default 'jobs'
   */
  planSteps?: PlanStepMode | undefined;
  /** Most step jobs this worker runs at once (1 to 256). @default 8 */
  jobConcurrency?: number | undefined;
}

/** The `cluster` option of `createRuntime`: timing, and where plan steps run. */
export interface ClusterWorkerOptions extends ClusterTimingOptions, ClusterJobOptions {}

/** How a runtime joins a cluster of workers on one Postgres database (the ledger's). */
export interface ClusterOptions extends ClusterWorkerOptions {
  readonly connectionString: string;
  /** @default 'agentlanes' */
  readonly schema?: string | undefined;
}

/** The cluster's timing, resolved. Takeover after a crash: at most `leaseMs + scanMs` (+ one adoption). */
export interface ClusterTiming {
  readonly leaseMs: number;
  readonly renewMs: number;
  readonly pollMs: number;
  readonly scanMs: number;
}

/** The job options, resolved. */
export interface ClusterJobSettings {
  readonly planSteps: PlanStepMode;
  readonly jobConcurrency: number;
}

const timingSchema = z.object({
  leaseMs: z.int().min(500).max(600_000).default(10_000),
  renewMs: z.int().min(50).max(600_000).optional(),
  pollMs: z.int().min(10).max(60_000).default(500),
  scanMs: z.int().min(50).max(600_000).default(2_000),
});

const jobSchema = z.object({
  planSteps: z.enum(planStepModes).default('jobs'),
  jobConcurrency: z.int().min(1).max(256).default(8),
});

/** Parse `input` with `schema`; bad values throw `invalid_input` naming each field. */
function parseClusterOptions<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.map(String).join('.')}: ${issue.message}`,
  );
  throw new RuntimeError('invalid_input', `invalid cluster options: ${problems.join('; ')}`);
}

/** Resolve the timing; bad values throw `invalid_input` naming the field. A renewal must come well within a lease. */
export function clusterTiming(options: ClusterOptions): ClusterTiming {
  const parsed = parseClusterOptions(timingSchema, {
    leaseMs: options.leaseMs,
    renewMs: options.renewMs,
    pollMs: options.pollMs,
    scanMs: options.scanMs,
  });
  const { leaseMs, pollMs, scanMs } = parsed;
  const renewMs = parsed.renewMs ?? Math.floor(leaseMs / 3);
  if (renewMs > leaseMs / 2) {
    throw new RuntimeError(
      'invalid_input',
      'invalid cluster options: renewMs must be at most half of leaseMs',
    );
  }
  return { leaseMs, renewMs, pollMs, scanMs };
}

/** Resolve where plan steps run and how many jobs a worker takes; bad values throw `invalid_input`. */
export function clusterJobSettings(options: ClusterOptions): ClusterJobSettings {
  return parseClusterOptions(jobSchema, {
    planSteps: options.planSteps,
    jobConcurrency: options.jobConcurrency,
  });
}
