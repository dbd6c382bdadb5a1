import { coolsProfile, disablesProfile } from './classify-failure.js';
import type { FailureReason } from './classify-failure.js';

/** Usage and failure state of one auth profile; plain serialisable data, all times in ms since the epoch. */
export interface ProfileState {
  readonly lastUsedAt?: number;
  readonly lastFailureAt?: number;
  /** Consecutive failures on the cooldown ladder. */
  readonly errorCount: number;
  readonly cooldownUntil?: number;
  /** When set, the cooldown applies only to this model. */
  readonly cooldownModel?: string;
  readonly disabledUntil?: number;
  /** Consecutive failures on the disable ladder (billing and permanently invalid keys). */
  readonly billingFailures: number;
}

/** A profile that has never been used and never failed. */
export const freshProfileState: ProfileState = { errorCount: 0, billingFailures: 0 };

/** A failure to record against a profile. */
export interface ProfileFailure {
  readonly reason: FailureReason;
  readonly now: number;
  /** The model the attempt used. */
  readonly model?: string | undefined;
  /** The provider's Retry-After, in ms; it sets the cooldown (capped at the ladder's top, 5 min). */
  readonly retryAfterMs?: number | undefined;
  /** Scope a rate-limit cooldown to `model` instead of the whole profile. @default false */
  readonly perModel?: boolean | undefined;
}

/** Counters reset once a profile has gone this long (24 h) without a failure. */
export const failureResetMs = 24 * 60 * 60_000;

const cooldownLadderMs = [30_000, 60_000, 5 * 60_000] as const;
const disableBaseMs = 5 * 60 * 60_000;
const disableCapMs = 24 * 60 * 60_000;

/** Cooldown after the n-th consecutive failure: 30 s, 60 s, then 5 min for every later one. */
export function nextCooldownMs(consecutiveFailures: number): number {
  const rung = Math.min(Math.max(1, Math.floor(consecutiveFailures)), cooldownLadderMs.length) - 1;
  return cooldownLadderMs[rung] ?? cooldownLadderMs[0];
}

/** Disable after the n-th consecutive billing failure: 5 h, doubling per failure, capped at 24 h. */
export function nextDisableMs(consecutiveFailures: number): number {
  const exponent = Math.max(1, Math.floor(consecutiveFailures)) - 1;
  // Past 2^3 the cap has long been reached; clamping the exponent keeps the arithmetic finite.
  return Math.min(disableBaseMs * 2 ** Math.min(exponent, 16), disableCapMs);
}

// Rebuild the state without a cooldown, so no `undefined` keys end up in serialised data.
function withoutCooldown(state: ProfileState): ProfileState {
  const { cooldownUntil: _until, cooldownModel: _model, ...rest } = state;
  return rest;
}

function cooldownCovers(state: ProfileState, model: string | undefined): boolean {
  return state.cooldownModel === undefined || model === undefined || state.cooldownModel === model;
}

/** The longest cooldown: the ladder's top rung (5 min); a longer Retry-After is capped to it. */
export const maxCooldownMs = cooldownLadderMs[cooldownLadderMs.length - 1] ?? 5 * 60_000;

/**
 * How long a profile cools after its n-th consecutive failure: the provider's Retry-After when it gave one (as
 * given when shorter than the ladder's step, capped at the ladder's top when longer), else the ladder's step.
 */
export function cooldownMs(consecutiveFailures: number, retryAfterMs: number | undefined): number {
  // A garbled Retry-After (NaN, negative) is no Retry-After at all.
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs < 0)
    return nextCooldownMs(consecutiveFailures);
  return Math.min(retryAfterMs, maxCooldownMs);
}

function resetIfQuiet(state: ProfileState, now: number): ProfileState {
  const quiet = state.lastFailureAt !== undefined && now - state.lastFailureAt >= failureResetMs;
  return quiet ? { ...state, errorCount: 0, billingFailures: 0 } : state;
}

function recordCooldown(state: ProfileState, failure: ProfileFailure): ProfileState {
  const { now, model } = failure;
  const active = state.cooldownUntil !== undefined && now < state.cooldownUntil;
  // Attempts already in flight when the cooldown began fail too; they are the same incident.
  if (active && cooldownCovers(state, model)) return { ...state, lastFailureAt: now };
  const errorCount = state.errorCount + 1;
  let until = now + cooldownMs(errorCount, failure.retryAfterMs);
  if (active) until = Math.max(until, state.cooldownUntil ?? 0);
  const scoped = failure.perModel === true && failure.reason === 'rate_limit' && model !== undefined;
  // A second model cooling while another model's cooldown runs widens the cooldown to the whole profile.
  const next = { ...withoutCooldown(state), lastFailureAt: now, errorCount, cooldownUntil: until };
  return scoped && !active ? { ...next, cooldownModel: model } : next;
}

function recordDisable(state: ProfileState, now: number): ProfileState {
  if (state.disabledUntil !== undefined && now < state.disabledUntil) return { ...state, lastFailureAt: now };
  const billingFailures = state.billingFailures + 1;
  return {
    ...state,
    lastFailureAt: now,
    billingFailures,
    disabledUntil: now + nextDisableMs(billingFailures),
  };
}

/**
 * The state after a failed attempt: cooling reasons climb the 30 s / 60 s / 5 min ladder, billing and dead keys
 * the 5 h…24 h disable ladder; a failure inside an active window neither counts nor extends it.
 */
export function recordFailure(state: ProfileState, failure: ProfileFailure): ProfileState {
  if (coolsProfile(failure.reason)) return recordCooldown(resetIfQuiet(state, failure.now), failure);
  if (disablesProfile(failure.reason)) return recordDisable(resetIfQuiet(state, failure.now), failure.now);
  return state;
}

/**
 * The state after a successful attempt: counters, cooldown and disable cleared. With `model`, a cooldown
 * scoped to another model that is still running survives, with the count that led to it.
 */
export function recordSuccess(state: ProfileState, now: number, model?: string): ProfileState {
  const { disabledUntil: _disabled, ...rest } = withoutCooldown(state);
  const cleared: ProfileState = { ...rest, lastUsedAt: now, errorCount: 0, billingFailures: 0 };
  const { cooldownUntil, cooldownModel } = state;
  if (model === undefined || cooldownModel === undefined || cooldownModel === model) return cleared;
  if (cooldownUntil === undefined || now >= cooldownUntil) return cleared;
  return { ...cleared, errorCount: state.errorCount, cooldownUntil, cooldownModel };
}

/** The state after the profile was picked for an attempt. */
export function recordUse(state: ProfileState, now: number): ProfileState {
  return { ...state, lastUsedAt: now };
}

/**
 * When the profile can next be used for `model`: the later of its disable and an applicable cooldown, 0 when
 * neither was ever set. A cooldown scoped to one model applies to a call without `model`.
 */
export function availableAt(state: ProfileState, model?: string): number {
  const disabled = state.disabledUntil ?? 0;
  const cooling = cooldownCovers(state, model) ? (state.cooldownUntil ?? 0) : 0;
  return Math.max(0, disabled, cooling);
}

/** True when the profile is neither disabled nor cooling for `model` at `now`. */
export function isAvailable(state: ProfileState, now: number, model?: string): boolean {
  return availableAt(state, model) <= now;
}
