import { z } from 'zod';

/** Every queue mode the mixed workload sends messages in. */
export const workloadModes = [
  'steer',
  'followup',
  'collect',
  'steer-backlog',
  'interrupt',
  'reject',
] as const;
/** A queue mode of the mixed workload. */
export type WorkloadMode = (typeof workloadModes)[number];

/** A command for the mixed child, one JSON line on its stdin. */
export const mixedCommandSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('send'),
    session: z.string(),
    id: z.string(),
    text: z.string(),
    mode: z.enum(workloadModes),
  }),
  /** A plan of a few `record` steps; `risky` adds a high-risk `refund` step the operator must approve. */
  z.object({ op: z.literal('plan'), session: z.string(), id: z.string(), risky: z.boolean() }),
]);
/** A command for the mixed child. */
export type MixedCommand = z.infer<typeof mixedCommandSchema>;

/** A line the mixed child writes on stdout. */
export type MixedLine =
  | { readonly ready: true }
  /** Written only after send() resolved: the message is durable (or refused, or a duplicate). */
  | { readonly ack: string; readonly disposition: string; readonly runId?: string; readonly code?: string }
  /** executePlan() (or the operator's approvePlan()) resolved. */
  | { readonly plan: string; readonly runId: string; readonly status: string }
  | { readonly failed: string; readonly code: string; readonly message: string }
  /** The operator's decision on a redelivered event found nothing waiting any more (allowed, counted). */
  | { readonly stale: string; readonly code: string }
  | { readonly background: string };

/**
 * A side record, one JSON line appended synchronously to `<dbPath>.side.jsonl`: a tool that began executing
 * (`executed`, written before it does anything else), a deferred result the operator supplied or an approval it
 * gave (written once the call resolved).
 */
export interface SideRecord {
  readonly kind: 'executed' | 'supplied' | 'approved';
  readonly tool: string;
  readonly sessionKey: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly child: string;
}

/** Where the side records of a ledger file go. */
export function sidePathOf(dbPath: string): string {
  return `${dbPath}.side.jsonl`;
}
