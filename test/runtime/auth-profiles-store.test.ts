import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger, type RuntimeOptions } from 'agentlanes';
import { fakeClock } from 'agentlanes/testing';
import { createAuthProfileStore } from '../../src/runner/auth-profiles.js';
import { createAuthProfiles } from '../../src/runner/auth-profiles.js';
import { createHarness } from '../support/runtime-harness.js';

const twoKeys: RuntimeOptions['authProfiles'] = [
  { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' },
  { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-two-0000' },
];

/** A memory ledger that also lists every profile state saved to it, in order. */
function recordingLedger(): { ledger: Ledger; saved: [string, unknown][] } {
  const ledger = createMemoryLedger();
  const saved: [string, unknown][] = [];
  const save = ledger.saveProfileState.bind(ledger);
  ledger.saveProfileState = (profileId, state, at) => {
    saved.push([profileId, state]);
    return save(profileId, state, at);
  };
  return { ledger, saved };
}

function pool(ledger: Ledger) {
  return createAuthProfiles({
    profiles: twoKeys ?? [],
    order: {},
    perModelCooldown: false,
    ledger,
    clock: fakeClock({ now: 0 }),
    onError: (error) => {
      throw error;
    },
  });
}

describe('the auth-profile store', () => {
  it('cools a profile through the policy and emits the new state when an attempt fails', () => {
    const store = createAuthProfileStore({ perModelCooldown: false });
    const recorded: unknown[] = [];
    store.on('recorded', (event) => recorded.push(event));
    store.trigger.failed({ profileId: 'p1', failure: { reason: 'rate_limit', now: 1_000 } });
    const state = store.getSnapshot().context.states.get('p1');
    expect(state).toEqual({ errorCount: 1, billingFailures: 0, lastFailureAt: 1_000, cooldownUntil: 31_000 });
    expect(recorded).toEqual([{ type: 'recorded', profileId: 'p1', outcome: 'failed', state }]);
  });

  it('scopes a rate-limit cooldown to the model when perModelCooldown is on', () => {
    const store = createAuthProfileStore({ perModelCooldown: true });
    store.trigger.failed({ profileId: 'p1', failure: { reason: 'rate_limit', now: 0, model: 'm' } });
    expect(store.getSnapshot().context.states.get('p1')).toMatchObject({ cooldownModel: 'm' });
  });

  it('clears the counters and emits when an attempt succeeds', () => {
    const store = createAuthProfileStore({ perModelCooldown: false });
    const outcomes: string[] = [];
    store.on('recorded', (event) => outcomes.push(event.outcome));
    store.trigger.failed({ profileId: 'p1', failure: { reason: 'rate_limit', now: 0 } });
    store.trigger.succeeded({ profileId: 'p1', now: 40_000 });
    expect(store.getSnapshot().context.states.get('p1')).toEqual({
      errorCount: 0,
      billingFailures: 0,
      lastFailureAt: 0,
      lastUsedAt: 40_000,
    });
    expect(outcomes).toEqual(['failed', 'succeeded']);
  });

  it('replaces the states without emitting when saved states are loaded', () => {
    const store = createAuthProfileStore({ perModelCooldown: false });
    const recorded: unknown[] = [];
    store.on('recorded', (event) => recorded.push(event));
    store.trigger.loaded({ states: new Map([['p2', { errorCount: 2, billingFailures: 0 }]]) });
    expect([...store.getSnapshot().context.states]).toEqual([['p2', { errorCount: 2, billingFailures: 0 }]]);
    expect(recorded).toEqual([]);
  });
});

describe('the auth-profile pool', () => {
  it('saves each recorded state to the ledger when an attempt is recorded', async () => {
    const { ledger, saved } = recordingLedger();
    const profiles = pool(ledger);
    await profiles.load();
    expect(profiles.failed('p1', { reason: 'rate_limit', model: 'm', now: 0 })).toBe(30_000);
    profiles.succeeded('p2', 5);
    expect(saved.map(([id]) => id)).toEqual(['p1', 'p2']);
    expect((await ledger.loadProfileStates()).get('p1')).toMatchObject({ cooldownUntil: 30_000 });
  });

  it('writes nothing back when it loads the saved states', async () => {
    const { ledger, saved } = recordingLedger();
    await ledger.saveProfileState('p1', { errorCount: 1, billingFailures: 0, cooldownUntil: 30_000 }, 0);
    saved.length = 0;
    const profiles = pool(ledger);
    await profiles.load();
    expect(saved).toEqual([]);
    expect(profiles.next('scripted', 'm', new Set(), 0)?.id).toBe('p2');
  });
});

describe('runtime.stats().profiles', () => {
  it('counts attempts per profile and shows the cooldown when a profile was rate limited', async () => {
    const h = createHarness([{ error: { status: 429, message: 'rate limit exceeded' } }, { text: 'ok' }], {
      authProfiles: twoKeys,
    });
    expect(h.runtime.stats().profiles).toEqual({
      p1: { succeeded: 0, failed: 0, availableAt: 0 },
      p2: { succeeded: 0, failed: 0, availableAt: 0 },
    });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ text: 'hi' });
    const ended = chat.waitForEnd({ timeoutMs: 600_000 });
    await h.clock.advance(0);
    expect(await ended).toMatchObject({ run: { status: 'completed' } });
    expect(h.runtime.stats().profiles).toEqual({
      p1: { succeeded: 0, failed: 1, availableAt: 30_000 },
      p2: { succeeded: 1, failed: 0, availableAt: 0, lastUsedAt: 0 },
    });
    await h.close();
  });
});
