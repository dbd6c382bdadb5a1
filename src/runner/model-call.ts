import {
  type ModelProvider,
  type ProviderCredential,
  type ThinkingLevel,
  ProviderError,
  thinkingLevels,
  type ModelMessage,
} from '../providers/index.js';
import {
  type FailureReason,
  backoffDelay,
  retryAfterDelay,
  classifyFailure,
  errorCodeFor,
  rotatesProfile,
} from '../policies/index.js';
import { abortReason, RuntimeError } from '../core/index.js';
import { type ModelTurn, streamModelTurn, type RunText } from './model-turn.js';
import type { RunContext } from './run-context.js';
import { withInlineData } from './inline-data.js';

/** One model the run may use, in fallback order. */
export interface ModelCandidate {
  readonly providerName: string;
  readonly provider: ModelProvider;
  readonly model: string;
}

/** An auth profile picked for an attempt: its id and its credential, resolved at call time. */
export interface PickedProfile {
  readonly id: string;
  readonly credential: () => ProviderCredential;
}

/** The failure reasons profile bookkeeping cares about (see policies/classify-failure). */
export type ProfileFailureReason = string;

/** Auth profiles of the providers, as the attempt loop uses them; the runtime keeps and persists their state. */
export interface AuthProfilePool {
  /** Whether `provider` has auth profiles at all (if not, calls carry no credential). */
  has(provider: string): boolean;
  /**
   * The next available profile for `provider`/`model` not in `tried`, in order (the session's `preferred` one
   * first when it is available); undefined when none is left.
   */
  next(
    provider: string,
    model: string,
    tried: ReadonlySet<string>,
    now: number,
    preferred?: string,
  ): PickedProfile | undefined;
  /** Record a failure; returns when the profile is usable again (0 when it was not cooled). */
  failed(
    profileId: string,
    failure: { reason: ProfileFailureReason; model: string; retryAfterMs?: number; now: number },
  ): number;
  succeeded(profileId: string, now: number): void;
  /**
   * Why `provider` has no profile to offer for `model` at `now`: the usable profile that comes back soonest (and
   * when), and a message per profile that cannot be used at all because its secret is missing.
   */
  availability(provider: string, model: string, now: number): ProfileAvailability;
  /**
   * Remove every known secret from `text` (error messages must never carry one), and make it storable in every
   * ledger (`storableText`: a U+0000 becomes U+FFFD).
   */
  readonly scrub: (text: string) => string;
}

/** The soonest usable profile of a provider, and the profiles missing their secret (configuration errors). */
export interface ProfileAvailability {
  readonly soonest?: { readonly profileId: string; readonly at: number };
  /** One message per profile whose secret is missing, naming the environment variable. */
  readonly missing: readonly string[];
}

/** What price a model has, per million tokens; undefined when unknown (counted as 0, and said so). */
export type PriceLookup = (provider: string, model: string) => { input: number; output: number } | undefined;

/** The failover state of one run: what its model calls change as the run goes. */
export interface FailoverState {
  /** The thinking level to start from; lowered for the rest of the run on `thinking_unsupported`. */
  thinking: ThinkingLevel | undefined;
  /** Cost of the run so far. */
  cost: number;
  /** The session's preferred auth profile. */
  readonly preferredProfile?: string;
}

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

/** Retries of one model without profiles to rotate (or with the same profile) on transient failures. */
const transientRetries = 3;

function lowered(level: ThinkingLevel | undefined): ThinkingLevel | undefined {
  const index = level === undefined ? 0 : thinkingLevels.indexOf(level);
  return index <= 0 ? undefined : thinkingLevels[index - 1];
}

/** What a failed attempt tells the failure classifier. */
type AttemptFailure = NonNullable<ReturnType<typeof failureOf>>;

function failureOf(error: unknown) {
  if (!(error instanceof ProviderError)) return undefined;
  return { status: error.status, code: error.code, message: error.message, retryAfterMs: error.retryAfterMs };
}

/** The error a model call ends the run with, its message scrubbed of secrets. */
function finalError(context: RunContext, reason: FailureReason, message: string): RuntimeError {
  return new RuntimeError(errorCodeFor(reason), context.services.profiles.scrub(message), {
    details: { reason },
  });
}

/**
 * One model call with failover (docs/failover.md): rotate through the provider's auth
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
  const { signal } = context;
  const attempts = { count: 0 };
  const wire = await withInlineData(context.services.workspace, signal, messages);
  for (;;) {
    const outcome = await tryCandidates(context, wire, runText, attempts);
    if ('turn' in outcome) return outcome.turn;
    if (signal.aborted) throw abortReason(signal);
    const mayWait = outcome.everyCooling && attempts.count < context.services.maxAttempts;
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
  const { candidates, maxAttempts } = context.services;
  let last: CandidateFailure = { reason: 'unknown', message: 'no model was tried', cooling: false };
  let everyCooling = true;
  for (let index = 0; index < candidates.length; index++) {
    const candidate = candidates[index] as ModelCandidate;
    const outcome = await tryCandidate(context, candidate, messages, runText, () => ++attempts.count);
    if ('turn' in outcome) return outcome;
    last = outcome;
    everyCooling &&= outcome.cooling;
    const next = candidates[index + 1];
    if (next === undefined) break;
    if (attempts.count >= maxAttempts) return { ...outcome, everyCooling: false };
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

/** Where the attempts at one candidate model stand: its current profile, the profiles tried, the retries spent. */
interface CandidateAttempts {
  readonly candidate: ModelCandidate;
  /** Made at the first rotation (only a candidate with auth profiles rotates). */
  tried: Set<string> | undefined;
  profile: PickedProfile | undefined;
  retries: number;
}

const noneTried: ReadonlySet<string> = new Set();

/** The candidate's next available auth profile not tried yet (the session's preferred one first). */
function nextProfile(context: RunContext, state: CandidateAttempts): PickedProfile | undefined {
  const { candidate, tried } = state;
  const now = context.services.clock.now();
  return context.services.profiles.next(
    candidate.providerName,
    candidate.model,
    tried ?? noneTried,
    now,
    context.failover.preferredProfile,
  );
}

/** Attempts at one candidate model until a turn, a failure that moves on to the next model, or a final error. */
async function tryCandidate(
  context: RunContext,
  candidate: ModelCandidate,
  messages: readonly ModelMessage[],
  runText: RunText,
  countAttempt: () => number,
): Promise<CandidateOutcome> {
  const { services, signal } = context;
  const pooled = services.profiles.has(candidate.providerName);
  const state: CandidateAttempts = { candidate, tried: undefined, profile: undefined, retries: 0 };
  if (pooled) state.profile = nextProfile(context, state);
  if (pooled && state.profile === undefined) return exhaustedCandidate(context, candidate, undefined);
  for (;;) {
    if (countAttempt() > services.maxAttempts)
      return { reason: 'unknown', message: `gave up after ${services.maxAttempts} attempts`, cooling: false };
    // One attempt with the current profile (in this frame: no call of its own per attempt); a success clears the
    // profile's failures and reports the cost.
    const { profile } = state;
    try {
      const paced = paceRequest(context, candidate.providerName);
      if (paced !== undefined) await paced;
      const startedAt = services.clock.now();
      const turn = await streamModelTurn(context, messages, runText, {
        provider: candidate.provider,
        model: candidate.model,
        thinking: context.failover.thinking,
        credential: profile?.credential(),
      });
      if (profile !== undefined) services.profiles.succeeded(profile.id, services.clock.now());
      reportCost(context, candidate, profile, turn, startedAt);
      return { turn };
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      const failure = failureOf(error);
      if (failure === undefined) throw error;
      const ended = await recoverFrom(context, state, failure);
      if (ended !== undefined) return ended;
    }
  }
}

/**
 * Take the request's start of the global lane's rate (a provider counts requests, so every model call takes one);
 * undefined when one was free at once. A long wait is reported as `lane.waited`.
 */
export function paceRequest(context: RunContext, provider: string): Promise<void> | undefined {
  const { runId, signal } = context;
  return context.services.globalLane.pace(provider, {
    signal,
    onWaited: (info) => context.emit({ type: 'lane.waited', runId, ...info }),
  });
}

/**
 * What a failed attempt leads to: a final error (thrown), a failure that ends the candidate (returned), or
 * undefined to try again (thinking lowered, next profile, or after a backoff).
 */
async function recoverFrom(
  context: RunContext,
  state: CandidateAttempts,
  failure: AttemptFailure,
): Promise<CandidateFailure | undefined> {
  const reason = classifyFailure(failure);
  const message = context.services.profiles.scrub(failure.message);
  if (reason === 'context_overflow' || reason === 'format' || reason === 'aborted') {
    throw finalError(context, reason, message);
  }
  if (reason === 'model_not_found') return { reason, message, cooling: false };
  if (reason === 'thinking_unsupported') return lowerThinking(context, state.candidate, message);
  if (state.profile !== undefined && rotatesProfile(reason)) {
    return rotateProfile(context, state, state.profile, {
      reason,
      message,
      retryAfterMs: failure.retryAfterMs,
    });
  }
  if (state.retries >= transientRetries) return { reason, message, cooling: false };
  const delay = retryAfterDelay(failure.retryAfterMs, backoffDelay(state.retries++, context.services.random));
  await context.services.clock.sleep(delay, context.signal);
  return undefined;
}

/** Lower the run's thinking level one step (announced); a failure when the run asked for no thinking at all. */
function lowerThinking(
  context: RunContext,
  candidate: ModelCandidate,
  message: string,
): CandidateFailure | undefined {
  const { failover } = context;
  const next = lowered(failover.thinking);
  if (failover.thinking === undefined) return { reason: 'thinking_unsupported', message, cooling: false };
  context.emit({
    type: 'thinking.lowered',
    runId: context.runId,
    model: candidate.model,
    from: failover.thinking,
    to: next ?? 'off',
  });
  failover.thinking = next;
  return undefined;
}

/** Cool the failed profile and move on to the candidate's next one (announced); a failure when none is left. */
function rotateProfile(
  context: RunContext,
  state: CandidateAttempts,
  profile: PickedProfile,
  failed: { reason: FailureReason; message: string; retryAfterMs: number | undefined },
): CandidateFailure | undefined {
  const { candidate } = state;
  const { reason, message } = failed;
  coolDown(context, candidate, profile, reason, failed.retryAfterMs);
  (state.tried ??= new Set()).add(profile.id);
  const next = nextProfile(context, state);
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
  state.profile = next;
  return undefined;
}

function coolDown(
  context: RunContext,
  candidate: ModelCandidate,
  profile: PickedProfile,
  reason: FailureReason,
  retryAfterMs: number | undefined,
): void {
  const now = context.services.clock.now();
  const until = context.services.profiles.failed(profile.id, {
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
