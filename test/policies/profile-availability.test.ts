import { describe, expect, it } from 'vitest';
import {
  availableAt,
  freshProfileState,
  isAvailable,
  recordFailure,
  recordSuccess,
  recordUse,
} from '../../src/policies/profile-cooldown.js';
import type { ProfileState } from '../../src/policies/profile-cooldown.js';

const start = 1_000_000;
const minute = 60_000;
const hour = 60 * minute;

describe('recordFailure', () => {
  it('scopes the cooldown to the model when a per-model rate limit hits', () => {
    const state = recordFailure(freshProfileState, {
      reason: 'rate_limit',
      now: start,
      model: 'opus',
      perModel: true,
    });
    expect(state).toMatchObject({ cooldownUntil: start + 30_000, cooldownModel: 'opus' });
    expect(isAvailable(state, start + 1, 'opus')).toBe(false);
    expect(isAvailable(state, start + 1, 'haiku')).toBe(true);
  });

  it('cools the whole profile when a per-model failure is not a rate limit', () => {
    const state = recordFailure(freshProfileState, {
      reason: 'overloaded',
      now: start,
      model: 'opus',
      perModel: true,
    });
    expect(state.cooldownModel).toBeUndefined();
    expect(isAvailable(state, start + 1, 'haiku')).toBe(false);
  });

  it('widens to the whole profile when a second model fails during a per-model cooldown', () => {
    const first = recordFailure(freshProfileState, {
      reason: 'rate_limit',
      now: start,
      model: 'opus',
      perModel: true,
    });
    const second = recordFailure(first, {
      reason: 'rate_limit',
      now: start + 1000,
      model: 'haiku',
      perModel: true,
    });
    expect(second).toEqual({
      errorCount: 2,
      billingFailures: 0,
      lastFailureAt: start + 1000,
      cooldownUntil: start + 61_000,
    });
  });
});

describe('recordSuccess', () => {
  const battered: ProfileState = {
    errorCount: 3,
    billingFailures: 2,
    lastFailureAt: start,
    cooldownUntil: start + 5 * minute,
    disabledUntil: start + 10 * hour,
  };

  it('clears counters, cooldown and disable when an attempt succeeds', () => {
    expect(recordSuccess(battered, start + 1000)).toEqual({
      errorCount: 0,
      billingFailures: 0,
      lastFailureAt: start,
      lastUsedAt: start + 1000,
    });
  });

  it('keeps another model’s running cooldown when the success was on a different model', () => {
    const cooled = { ...battered, cooldownModel: 'opus' };
    expect(recordSuccess(cooled, start + 1000, 'haiku')).toMatchObject({
      errorCount: 3,
      billingFailures: 0,
      cooldownUntil: start + 5 * minute,
      cooldownModel: 'opus',
    });
    expect(recordSuccess(cooled, start + 1000, 'opus').cooldownUntil).toBeUndefined();
  });
});

describe('recordUse', () => {
  it('stamps the last use when a profile is picked', () => {
    expect(recordUse(freshProfileState, start)).toEqual({
      errorCount: 0,
      billingFailures: 0,
      lastUsedAt: start,
    });
  });
});

describe('availableAt', () => {
  it('reports 0 when the profile is fresh', () => {
    expect(availableAt(freshProfileState)).toBe(0);
  });

  it('takes the later of disable and cooldown when both are set', () => {
    const state = { ...freshProfileState, cooldownUntil: start + 30_000, disabledUntil: start + 5 * hour };
    expect(availableAt(state)).toBe(start + 5 * hour);
  });

  it('counts a per-model cooldown when no model or the same model is named', () => {
    const state = { ...freshProfileState, cooldownUntil: start + 30_000, cooldownModel: 'opus' };
    expect(availableAt(state)).toBe(start + 30_000);
    expect(availableAt(state, 'opus')).toBe(start + 30_000);
    expect(availableAt(state, 'haiku')).toBe(0);
  });
});

describe('isAvailable', () => {
  it('is available when the profile is fresh', () => {
    expect(isAvailable(freshProfileState, start)).toBe(true);
  });

  it('turns available exactly at 5 h when disabled for 5 h and cooling for 30 s', () => {
    const state = { ...freshProfileState, cooldownUntil: start + 30_000, disabledUntil: start + 5 * hour };
    expect(isAvailable(state, start + 30_000)).toBe(false);
    expect(isAvailable(state, start + 5 * hour - 1)).toBe(false);
    expect(isAvailable(state, start + 5 * hour)).toBe(true);
  });

  it('turns available exactly at 30 s when only cooling', () => {
    const state = recordFailure(freshProfileState, { reason: 'timeout', now: start });
    expect(isAvailable(state, start + 29_999)).toBe(false);
    expect(isAvailable(state, start + 30_000)).toBe(true);
  });
});
