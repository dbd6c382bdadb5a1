import { z } from 'zod';
import { RuntimeError } from '../core/errors.js';

/** How fast a cluster notices a dead worker and a missed doorbell (docs/distributed.md). */
export interface ClusterTimingOptions {
  /** A worker that stops renewing its lease for this long loses its sessions. @default 10000 */
  leaseMs?: number | undefined;
  /** How often a worker renews its lease. @default leaseMs / 3 */
  renewMs?: number | undefined;
  /** The longest a forwarded call, its answer or a freed lane slot waits when its NOTIFY was missed. @default 500 */
  pollMs?: number | undefined;
  /** How often a worker looks for sessions with work that no live worker holds. @default 2000 */
  scanMs?: number | undefined;
}

/** How a runtime joins a cluster of workers on one Postgres database (the ledger's). */
export interface ClusterOptions extends ClusterTimingOptions {
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

const timingSchema = z.object({
  leaseMs: z.int().min(500).max(600_000).default(10_000),
  renewMs: z.int().min(50).max(600_000).optional(),
  pollMs: z.int().min(10).max(60_000).default(500),
  scanMs: z.int().min(50).max(600_000).default(2_000),
});

/** Resolve the timing; bad values throw `invalid_input` naming the field. A renewal must come well within a lease. */
export function clusterTiming(options: ClusterOptions): ClusterTiming {
  const parsed = timingSchema.safeParse({
    leaseMs: options.leaseMs,
    renewMs: options.renewMs,
    pollMs: options.pollMs,
    scanMs: options.scanMs,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.map(String).join('.')}: ${issue.message}`,
    );
    throw new RuntimeError('invalid_input', `invalid cluster options: ${problems.join('; ')}`);
  }
  const { leaseMs, pollMs, scanMs } = parsed.data;
  const renewMs = parsed.data.renewMs ?? Math.floor(leaseMs / 3);
  if (renewMs > leaseMs / 2) {
    throw new RuntimeError(
      'invalid_input',
      'invalid cluster options: renewMs must be at most half of leaseMs',
    );
  }
  return { leaseMs, renewMs, pollMs, scanMs };
}
