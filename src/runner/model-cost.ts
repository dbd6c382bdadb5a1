import type { ModelCandidate, PickedProfile } from './failover-context.js';
import type { ModelTurn } from './model-turn.js';
import type { RunContext } from './run-context.js';

/**
 * Add what a model turn cost (at the model's price; unknown prices count 0) to the run and announce it, with when
 * the attempt started and why the model stopped.
 */
export function reportCost(
  context: RunContext,
  candidate: ModelCandidate,
  profile: PickedProfile | undefined,
  turn: ModelTurn,
  startedAt: number,
): void {
  const price = context.services.prices(candidate.providerName, candidate.model);
  const cost =
    price === undefined
      ? 0
      : (turn.usage.inputTokens * price.input + turn.usage.outputTokens * price.output) / 1e6;
  context.failover.cost += cost;
  context.emit({
    type: 'cost.updated',
    runId: context.runId,
    provider: candidate.providerName,
    model: candidate.model,
    ...(profile === undefined ? {} : { profileId: profile.id }),
    inputTokens: turn.usage.inputTokens,
    outputTokens: turn.usage.outputTokens,
    cost,
    cumulativeCost: context.failover.cost,
    priced: price !== undefined,
    startedAt,
    ...(turn.finishReason === undefined ? {} : { finishReason: turn.finishReason }),
  });
}
