import { abortReason } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';
import { backoffDelay, retryAfterDelay } from '../policies/backoff.js';
import {
  classifyFailure,
  errorCodeFor,
  rotatesProfile,
  type FailureReason,
} from '../policies/classify-failure.js';
import {
  ProviderError,
  thinkingLevels,
  type ModelMessage,
  type ThinkingLevel,
} from '../providers/model-provider.js';
import {
  beyondWaitMessage,
  exhaustedCandidate,
  waitForCoolingProfile,
  type CandidateFailure,
} from './cooling-wait.js';
import type { ModelCandidate, PickedProfile } from './failover-context.js';
import { streamModelTurn, type ModelTurn, type RunText } from './model-turn.js';
import type { RunContext } from './run-context.js';

/** Retries of one model without profiles to rotate (or with the same profile) on transient failures. */
const transientRetries = 3;

function lowered(level: ThinkingLevel | undefined): ThinkingLevel | undefined {
  const index = level === undefined ? 0 : thinkingLevels.indexOf(level);
  return index <= 0 ? undefined : thinkingLevels[index - 1];
}

function failureOf(error: unknown) {
  if (!(error instanceof ProviderError)) return undefined;
  return { status: error.status, code: error.code, message: error.message, retryAfterMs: error.retryAfterMs };
}

/** The error a model call ends the run with, its message scrubbed of secrets. */
function finalError(context: RunContext, reason: FailureReason, message: string): RuntimeError {
  return new RuntimeError(errorCodeFor(reason), context.failover.profiles.scrub(message), {
    details: { reason },
  });
}

/**
 * One model call with failover (BEHAVIOUR.md, "Auth profiles and failover"): rotate through the provider's auth
 * profiles on auth / rate_limit / overloaded / billing / timeout (cooling each one), then fall back to the next
 * model; lower the thinking level on `thinking_unsupported`; retry transient failures with full-jitter backoff on
 * the injected clock, honouring Retry-After; never retry a user abort (and never cool a profile for it). When
 * every profile of every model is cooling, wait for the soonest one within `failover.maxWaitMs`, then go again.
 * A context overflow is thrown to the turn loop, which compacts. Every successful attempt reports its cost.
 */
export async function callModel(
  context: RunContext,
  messages: readonly ModelMessage[],
  runText: RunText,
): Promise<ModelTurn> {
  const { failover, signal } = context;
  const attempts = { count: 0 };
  for (;;) {
    const outcome = await tryCandidates(context, messages, runText, attempts);
    if ('turn' in outcome) return outcome.turn;
    if (signal.aborted) throw abortReason(signal);
    const mayWait = outcome.everyCooling && attempts.count < failover.maxAttempts;
    if (mayWait && (await waitForCoolingProfile(context))) continue;
    const message = outcome.everyCooling ? beyondWaitMessage(context, outcome.message) : outcome.message;
    throw finalError(context, outcome.reason, message);
  }
}

/** One pass over the candidate models, in fallback order; `everyCooling` when each ended with only cooling profiles. */
async function tryCandidates(
  context: RunContext,
  messages: readonly ModelMessage[],
  runText: RunText,
  attempts: { count: number },
): Promise<{ turn: ModelTurn } | (CandidateFailure & { everyCooling: boolean })> {
  const { failover } = context;
  let last: CandidateFailure = { reason: 'unknown', message: 'no model was tried', cooling: false };
  let everyCooling = true;
  for (const [index, candidate] of failover.candidates.entries()) {
    const outcome = await tryCandidate(context, candidate, messages, runText, () => ++attempts.count);
    if ('turn' in outcome) return outcome;
    last = outcome;
    everyCooling &&= outcome.cooling;
    const next = failover.candidates[index + 1];
    if (next === undefined) break;
    if (attempts.count >= failover.maxAttempts) return { ...outcome, everyCooling: false };
    context.emit({
      type: 'failover.fallback',
      runId: context.runId,
      fromProvider: candidate.providerName,
      fromModel: candidate.model,
      toProvider: next.providerName,
      toModel: next.model,
      reason: outcome.reason,
    });
  }
  return { ...last, everyCooling };
}

type CandidateOutcome = { turn: ModelTurn } | CandidateFailure;

async function tryCandidate(
  context: RunContext,
  candidate: ModelCandidate,
  messages: readonly ModelMessage[],
  runText: RunText,
  countAttempt: () => number,
): Promise<CandidateOutcome> {
  const { failover, signal, clock } = context;
  const pooled = failover.profiles.has(candidate.providerName);
  const tried = new Set<string>();
  let retries = 0;
  let profile = pooled
    ? failover.profiles.next(
        candidate.providerName,
        candidate.model,
        tried,
        clock.now(),
        failover.preferredProfile,
      )
    : undefined;
  if (pooled && profile === undefined) return exhaustedCandidate(context, candidate, undefined);
  for (;;) {
    if (countAttempt() > failover.maxAttempts)
      return { reason: 'unknown', message: `gave up after ${failover.maxAttempts} attempts`, cooling: false };
    try {
      const credential = profile?.credential();
      const turn = await streamModelTurn(context, messages, runText, {
        provider: candidate.provider,
        model: candidate.model,
        thinking: failover.thinking,
        credential,
      });
      if (profile !== undefined) failover.profiles.succeeded(profile.id, clock.now());
      reportCost(context, candidate, profile, turn);
      return { turn };
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      const failure = failureOf(error);
      if (failure === undefined) throw error;
      const reason = classifyFailure(failure);
      const message = failover.profiles.scrub(failure.message);
      if (reason === 'context_overflow' || reason === 'format' || reason === 'aborted') {
        throw finalError(context, reason, message);
      }
      if (reason === 'model_not_found') return { reason, message, cooling: false };
      if (reason === 'thinking_unsupported') {
        const next = lowered(failover.thinking);
        if (failover.thinking === undefined) return { reason, message, cooling: false };
        context.emit({
          type: 'thinking.lowered',
          runId: context.runId,
          model: candidate.model,
          from: failover.thinking,
          to: next ?? 'off',
        });
        failover.thinking = next;
        continue;
      }
      if (profile !== undefined && rotatesProfile(reason)) {
        coolDown(context, candidate, profile, reason, failure.retryAfterMs);
        tried.add(profile.id);
        const next = failover.profiles.next(
          candidate.providerName,
          candidate.model,
          tried,
          clock.now(),
          failover.preferredProfile,
        );
        context.emit({
          type: 'failover.rotated',
          runId: context.runId,
          provider: candidate.providerName,
          model: candidate.model,
          fromProfile: profile.id,
          ...(next === undefined ? {} : { toProfile: next.id }),
          reason,
        });
        if (next === undefined) return exhaustedCandidate(context, candidate, { reason, message });
        profile = next;
        continue;
      }
      if (retries >= transientRetries) return { reason, message, cooling: false };
      const delay = retryAfterDelay(failure.retryAfterMs, backoffDelay(retries++, failover.random));
      await clock.sleep(delay, signal);
    }
  }
}

function coolDown(
  context: RunContext,
  candidate: ModelCandidate,
  profile: PickedProfile,
  reason: FailureReason,
  retryAfterMs: number | undefined,
): void {
  const now = context.clock.now();
  const until = context.failover.profiles.failed(profile.id, {
    reason,
    model: candidate.model,
    now,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
  if (until > now) {
    context.emit({
      type: 'profile.cooldown',
      runId: context.runId,
      profileId: profile.id,
      reason,
      until,
      model: candidate.model,
    });
  }
}

function reportCost(
  context: RunContext,
  candidate: ModelCandidate,
  profile: PickedProfile | undefined,
  turn: ModelTurn,
): void {
  const price = context.failover.prices(candidate.providerName, candidate.model);
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
  });
}
