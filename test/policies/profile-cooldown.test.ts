import { describe, expect, it } from 'vitest';
import {
  availableAt,
  freshProfileState,
  nextCooldownMs,
  nextDisableMs,
  recordFailure,
} from '../../src/policies/profile-cooldown.js';
import type { ProfileState } from '../../src/policies/profile-cooldown.js';

const start = 1_000_000;
const minute = 60_000;
const hour = 60 * minute;

// Fails once per step, each one just after the previous window ends, and returns every state.
function failInTurn(reason: 'rate_limit' | 'billing', times: number): ProfileState[] {
  const states: ProfileState[] = [];
  let state = freshProfileState;
  let now = start;
  for (let step = 0; step < times; step++) {
    state = recordFailure(state, { reason, now });
    states.push(state);
    now = availableAt(state);
  }
  return states;
}

describe('nextCooldownMs', () => {
  it.each([
    [0, 30_000],
    [1, 30_000],
    [2, 60_000],
    [3, 300_000],
    [4, 300_000],
    [50, 300_000],
  ])('climbs the ladder when there have been %i consecutive failures', (failures, ms) => {
    expect(nextCooldownMs(failures)).toBe(ms);
  });
});

describe('nextDisableMs', () => {
  it.each([
    [1, 5 * hour],
    [2, 10 * hour],
    [3, 20 * hour],
    [4, 24 * hour],
    [40, 24 * hour],
  ])('doubles from 5 h up to 24 h when there have been %i billing failures', (failures, ms) => {
    expect(nextDisableMs(failures)).toBe(ms);
  });
});

describe('recordFailure', () => {
  it('cools for 30 s, 60 s, 5 min, 5 min when rate limits follow each other', () => {
    const states = failInTurn('rate_limit', 4);
    expect(states.map((state) => state.errorCount)).toEqual([1, 2, 3, 4]);
    expect(states.map((state) => (state.cooldownUntil ?? 0) - (state.lastFailureAt ?? 0))).toEqual([
      30_000, 60_000, 300_000, 300_000,
    ]);
    expect(states[0]?.cooldownUntil).toBe(start + 30_000);
  });

  it('disables for 5 h, 10 h, 20 h, 24 h when billing failures follow each other', () => {
    const states = failInTurn('billing', 4);
    expect(states.map((state) => state.billingFailures)).toEqual([1, 2, 3, 4]);
    expect(states.map((state) => (state.disabledUntil ?? 0) - (state.lastFailureAt ?? 0))).toEqual([
      5 * hour,
      10 * hour,
      20 * hour,
      24 * hour,
    ]);
    expect(states.every((state) => state.errorCount === 0 && state.cooldownUntil === undefined)).toBe(true);
  });

  it('disables on the billing ladder when the key is permanently invalid', () => {
    const state = recordFailure(freshProfileState, { reason: 'auth_permanent', now: start });
    expect(state).toEqual({
      errorCount: 0,
      billingFailures: 1,
      lastFailureAt: start,
      disabledUntil: start + 5 * hour,
    });
  });

  it.each(['overloaded', 'timeout', 'auth'] as const)(
    'cools for 30 s when the first failure is %s',
    (reason) => {
      expect(recordFailure(freshProfileState, { reason, now: start }).cooldownUntil).toBe(start + 30_000);
    },
  );

  it.each([
    'format',
    'context_overflow',
    'model_not_found',
    'thinking_unsupported',
    'aborted',
    'unknown',
  ] as const)('leaves the state untouched when the failure is %s', (reason) => {
    expect(recordFailure(freshProfileState, { reason, now: start })).toBe(freshProfileState);
  });

  it('neither counts nor extends when a failure lands inside an active cooldown', () => {
    const first = recordFailure(freshProfileState, { reason: 'timeout', now: start });
    const second = recordFailure(first, {
      reason: 'rate_limit',
      now: start + 29_999,
      retryAfterMs: 10 * minute,
    });
    expect(second).toEqual({ ...first, lastFailureAt: start + 29_999 });
  });

  it('counts again when a failure lands exactly as the cooldown ends', () => {
    const first = recordFailure(freshProfileState, { reason: 'timeout', now: start });
    const second = recordFailure(first, { reason: 'timeout', now: start + 30_000 });
    expect(second).toMatchObject({ errorCount: 2, cooldownUntil: start + 30_000 + 60_000 });
  });

  it('neither counts nor extends when a billing failure lands inside an active disable', () => {
    const first = recordFailure(freshProfileState, { reason: 'billing', now: start });
    const second = recordFailure(first, { reason: 'billing', now: start + hour });
    expect(second).toMatchObject({ billingFailures: 1, disabledUntil: start + 5 * hour });
  });

  it('starts the ladders again when the last failure was 24 h ago', () => {
    const cooled = {
      errorCount: 3,
      billingFailures: 2,
      lastFailureAt: start,
      cooldownUntil: start + 5 * minute,
    };
    const failedAgain = recordFailure(cooled, { reason: 'rate_limit', now: start + 24 * hour });
    expect(failedAgain).toMatchObject({
      errorCount: 1,
      billingFailures: 0,
      cooldownUntil: start + 24 * hour + 30_000,
    });
  });

  it('keeps climbing when the last failure was just under 24 h ago', () => {
    const cooled = {
      errorCount: 3,
      billingFailures: 2,
      lastFailureAt: start,
      cooldownUntil: start + 5 * minute,
    };
    const failedAgain = recordFailure(cooled, { reason: 'billing', now: start + 24 * hour - 1 });
    expect(failedAgain).toMatchObject({
      errorCount: 3,
      billingFailures: 3,
      disabledUntil: start + 44 * hour - 1,
    });
  });

  it('waits for Retry-After when it is longer than the ladder', () => {
    const state = recordFailure(freshProfileState, {
      reason: 'rate_limit',
      now: start,
      retryAfterMs: 90_000,
    });
    expect(state.cooldownUntil).toBe(start + 90_000);
  });

  it('honours Retry-After as given when it is shorter than the ladder step', () => {
    const state = recordFailure(freshProfileState, { reason: 'rate_limit', now: start, retryAfterMs: 7_000 });
    expect(state).toMatchObject({ errorCount: 1, cooldownUntil: start + 7_000 });
  });

  it('caps Retry-After at the ladder maximum (5 min) when the provider asks for a week', () => {
    const state = recordFailure(freshProfileState, {
      reason: 'rate_limit',
      now: start,
      retryAfterMs: 168 * hour,
    });
    expect(state.cooldownUntil).toBe(start + 5 * minute);
  });

  it('keeps the ladder step when Retry-After is garbled', () => {
    const state = recordFailure(freshProfileState, { reason: 'rate_limit', now: start, retryAfterMs: NaN });
    expect(state.cooldownUntil).toBe(start + 30_000);
  });
});
