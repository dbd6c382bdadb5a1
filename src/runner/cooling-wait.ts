import type { FailureReason } from '../policies/index.js';
import type { ModelCandidate } from './failover-context.js';
import type { RunContext } from './run-context.js';

/** How one candidate model's attempts ended without a turn; `cooling` when its profiles are only cooling. */
export interface CandidateFailure {
  readonly reason: FailureReason;
  readonly message: string;
  /** True when every usable profile of the candidate is cooling or disabled (none is left to try now). */
  readonly cooling: boolean;
}

/** The profile a run waits for: the one that comes back soonest, over every candidate model. */
export interface CoolingWait {
  readonly candidate: ModelCandidate;
  readonly profileId: string;
  readonly until: number;
  readonly waitMs: number;
}

/**
 * The failure of a candidate whose pool has no profile left to try: cooling when some usable profile will come
 * back; a configuration error (`auth`, naming the unset variables) when every profile is missing its secret.
 */
export function exhaustedCandidate(
  context: RunContext,
  candidate: ModelCandidate,
  last: { reason: FailureReason; message: string } | undefined,
): CandidateFailure {
  const { soonest, missing } = context.services.profiles.availability(
    candidate.providerName,
    candidate.model,
    context.services.clock.now(),
  );
  if (soonest === undefined) {
    const message = missing.length > 0 ? missing.join('; ') : `${candidate.providerName} has no auth profile`;
    return { reason: last?.reason ?? 'auth', message: last?.message ?? message, cooling: false };
  }
  const message = `every auth profile of ${candidate.providerName} is cooling down`;
  return { reason: last?.reason ?? 'rate_limit', message: last?.message ?? message, cooling: true };
}

/** The soonest profile to come back over every candidate model, or undefined when none will. */
export function soonestProfile(context: RunContext): CoolingWait | undefined {
  const now = context.services.clock.now();
  let best: CoolingWait | undefined;
  for (const candidate of context.services.candidates) {
    const { soonest } = context.services.profiles.availability(candidate.providerName, candidate.model, now);
    if (soonest === undefined || (best !== undefined && soonest.at >= best.until)) continue;
    best = { candidate, profileId: soonest.profileId, until: soonest.at, waitMs: soonest.at - now };
  }
  return best;
}

/**
 * When every profile of every candidate model is cooling (docs/failover.md): wait on the run's clock, abortable by
 * its signal, for the soonest profile if it is back within `failover.maxWaitMs`, announcing `failover.waiting`.
 * Resolves true after the wait; false (without waiting) when nothing comes back in time.
 */
export async function waitForCoolingProfile(context: RunContext): Promise<boolean> {
  const wait = soonestProfile(context);
  if (wait === undefined || wait.waitMs > context.services.maxWaitMs) return false;
  context.emit({
    type: 'failover.waiting',
    runId: context.runId,
    provider: wait.candidate.providerName,
    model: wait.candidate.model,
    profileId: wait.profileId,
    waitMs: wait.waitMs,
    until: wait.until,
  });
  if (wait.waitMs > 0) await context.services.clock.sleep(wait.waitMs, context.signal);
  return true;
}

/** The final error's message when a wait was beyond `failover.maxWaitMs`: says when and why it gave up. */
export function beyondWaitMessage(context: RunContext, message: string): string {
  const wait = soonestProfile(context);
  if (wait === undefined || wait.waitMs <= context.services.maxWaitMs) return message;
  return (
    `${message}; the soonest profile (${wait.profileId}) is back in ${wait.waitMs} ms, ` +
    `beyond failover.maxWaitMs (${context.services.maxWaitMs} ms)`
  );
}
