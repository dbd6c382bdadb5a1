import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderProfiles, profileKinds } from '../../src/policies/order-profiles.js';
import type { OrderableProfile, OrderProfilesInput } from '../../src/policies/order-profiles.js';
import { availableAt, isAvailable } from '../../src/policies/profile-cooldown.js';
import type { ProfileState } from '../../src/policies/profile-cooldown.js';

const now = 1_000_000;
const used = (lastUsedAt: number): ProfileState => ({ errorCount: 0, billingFailures: 0, lastUsedAt });
const cooling = (cooldownUntil: number, cooldownModel?: string): ProfileState => ({
  errorCount: 1,
  billingFailures: 0,
  cooldownUntil,
  ...(cooldownModel === undefined ? {} : { cooldownModel }),
});
const disabled = (disabledUntil: number): ProfileState => ({
  errorCount: 0,
  billingFailures: 1,
  disabledUntil,
});

const profiles: OrderableProfile[] = [
  { id: 'key-a', kind: 'api_key' },
  { id: 'token-a', kind: 'token' },
  { id: 'oauth-a', kind: 'oauth' },
  { id: 'key-b', kind: 'api_key' },
  { id: 'oauth-b', kind: 'oauth' },
];

type Case = Omit<Partial<OrderProfilesInput>, 'states'> & { states?: Record<string, ProfileState> };

function order(extra: Case = {}): string[] {
  const { states = {}, ...rest } = extra;
  return orderProfiles({ profiles, now, ...rest, states: new Map(Object.entries(states)) });
}

describe('orderProfiles', () => {
  it.each<[string, Case, string[]]>([
    ['nothing was ever used', {}, ['oauth-a', 'oauth-b', 'token-a', 'key-a', 'key-b']],
    [
      'some profiles were used',
      { states: { 'oauth-a': used(500), 'oauth-b': used(100), 'key-a': used(1), 'key-b': used(2) } },
      ['oauth-b', 'oauth-a', 'token-a', 'key-a', 'key-b'],
    ],
    [
      'a never-used profile meets a used one of the same kind',
      { states: { 'key-a': used(0) } },
      ['oauth-a', 'oauth-b', 'token-a', 'key-b', 'key-a'],
    ],
    [
      'a preferred profile is available',
      { preferred: 'key-b' },
      ['key-b', 'oauth-a', 'oauth-b', 'token-a', 'key-a'],
    ],
    [
      'the preferred profile is cooling',
      { preferred: 'oauth-a', states: { 'oauth-a': cooling(now + 30_000) } },
      ['oauth-b', 'token-a', 'key-a', 'key-b', 'oauth-a'],
    ],
    [
      'the preferred profile does not exist',
      { preferred: 'gone' },
      ['oauth-a', 'oauth-b', 'token-a', 'key-a', 'key-b'],
    ],
    [
      'an explicit order is configured',
      { explicitOrder: ['key-b', 'gone', 'token-a', 'key-b', 'oauth-b'] },
      ['key-b', 'token-a', 'oauth-b', 'oauth-a', 'key-a'],
    ],
    [
      'both a preferred profile and an explicit order are given',
      { preferred: 'key-a', explicitOrder: ['token-a', 'key-b'] },
      ['key-a', 'token-a', 'key-b', 'oauth-a', 'oauth-b'],
    ],
    [
      'profiles are cooling or disabled',
      {
        states: {
          'oauth-a': disabled(now + 5 * 3_600_000),
          'token-a': cooling(now + 60_000),
          'key-a': cooling(now + 30_000),
        },
      },
      ['oauth-b', 'key-b', 'key-a', 'token-a', 'oauth-a'],
    ],
    [
      'two cooling profiles become available at the same moment',
      { states: { 'key-a': cooling(now + 30_000), 'oauth-a': cooling(now + 30_000) } },
      ['oauth-b', 'token-a', 'key-b', 'oauth-a', 'key-a'],
    ],
    [
      'a cooldown has just expired',
      { states: { 'oauth-a': cooling(now), 'oauth-b': used(5) } },
      ['oauth-a', 'oauth-b', 'token-a', 'key-a', 'key-b'],
    ],
    [
      'a cooldown is scoped to another model',
      { model: 'haiku', states: { 'oauth-a': cooling(now + 30_000, 'opus') } },
      ['oauth-a', 'oauth-b', 'token-a', 'key-a', 'key-b'],
    ],
    [
      'a cooldown is scoped to the requested model',
      { model: 'opus', states: { 'oauth-a': cooling(now + 30_000, 'opus') } },
      ['oauth-b', 'token-a', 'key-a', 'key-b', 'oauth-a'],
    ],
  ])('orders the profiles when %s', (_name, input, expected) => {
    expect(order(input)).toEqual(expected);
  });

  it('returns an empty list when there are no profiles', () => {
    expect(orderProfiles({ profiles: [], states: new Map(), now })).toEqual([]);
  });

  it('keeps every invariant when profiles, states and options are random', () => {
    const state = fc.record({
      errorCount: fc.nat(5),
      billingFailures: fc.nat(5),
      lastUsedAt: fc.option(fc.integer({ min: 0, max: 2 * now }), { nil: undefined }),
      cooldownUntil: fc.option(fc.integer({ min: 0, max: 2 * now }), { nil: undefined }),
      cooldownModel: fc.option(fc.constantFrom('opus', 'haiku'), { nil: undefined }),
      disabledUntil: fc.option(fc.integer({ min: 0, max: 2 * now }), { nil: undefined }),
    });
    const entry = fc.record({
      kind: fc.constantFrom(...profileKinds),
      state: fc.option(state, { nil: undefined }),
    });
    const input = fc.record({
      entries: fc.uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), entry), {
        selector: ([id]) => id,
        maxLength: 8,
      }),
      model: fc.option(fc.constantFrom('opus', 'haiku'), { nil: undefined }),
      preferred: fc.option(fc.string({ maxLength: 3 }), { nil: undefined }),
      explicitOrder: fc.option(fc.array(fc.string({ maxLength: 3 })), { nil: undefined }),
    });
    fc.assert(
      fc.property(input, ({ entries, model, preferred, explicitOrder }) => {
        const states = new Map<string, ProfileState>();
        for (const [id, { state: value }] of entries)
          if (value !== undefined) states.set(id, value as ProfileState);
        const ids = entries.map(([id]) => id);
        const result = orderProfiles({
          profiles: entries.map(([id, { kind }]) => ({ id, kind })),
          states,
          now,
          model,
          preferred,
          explicitOrder,
        });
        const stateOf = (id: string): ProfileState => states.get(id) ?? { errorCount: 0, billingFailures: 0 };
        const ready = result.map((id) => isAvailable(stateOf(id), now, model));
        const waitingSince = result
          .filter((_id, index) => !ready[index])
          .map((id) => availableAt(stateOf(id), model));

        expect([...result].sort()).toEqual([...ids].sort());
        expect(ready).toEqual([...ready].sort((left, right) => Number(right) - Number(left)));
        expect(waitingSince).toEqual([...waitingSince].sort((left, right) => left - right));
        if (preferred !== undefined && ids.includes(preferred) && isAvailable(stateOf(preferred), now, model))
          expect(result[0]).toBe(preferred);
      }),
    );
  });
});
