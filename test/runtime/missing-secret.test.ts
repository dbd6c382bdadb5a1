import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger, type RuntimeOptions } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

const variable = 'AGENTLANES_MISSING_TEST_KEY';
const envProfile = {
  id: 'env-key',
  provider: 'scripted',
  type: 'api_key',
  secret: { env: variable },
} as const;

async function send(h: ReturnType<typeof createHarness>, text = 'hi') {
  const chat = h.runtime.session('telegram:1');
  await chat.send(text);
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  return ended;
}

afterEach(() => {
  delete process.env[variable];
});

describe('an auth profile whose secret is missing (a configuration error)', () => {
  it('fails with provider_auth naming the variable, calls nothing and cools nothing when it is the only profile', async () => {
    const ledger = createMemoryLedger();
    const shared: Ledger = { ...ledger, close: () => Promise.resolve() };
    const h = createHarness([{ text: 'unused' }], {
      ledger: shared,
      authProfiles: [envProfile],
      queue: { mode: 'followup', debounceMs: 0 },
    });
    const result = await send(h);
    expect(result).toMatchObject({
      run: {
        status: 'failed',
        error: {
          code: 'provider_auth',
          message: `auth profile "env-key": environment variable ${variable} is not set`,
        },
      },
    });
    expect(h.model.calls).toBe(0);
    expect(h.of('profile.cooldown')).toEqual([]);
    expect(h.of('failover.waiting')).toEqual([]);
    await h.clock.advance(0);
    expect([...(await ledger.loadProfileStates()).keys()]).toEqual([]);
    await h.close();
  });

  it('uses the profile again as soon as the variable is set, without waiting for any cooldown', async () => {
    const h = createHarness([{ text: 'now it works' }], {
      authProfiles: [envProfile],
      queue: { mode: 'followup', debounceMs: 0 },
    });
    expect(await send(h, 'one')).toMatchObject({ run: { error: { code: 'provider_auth' } } });
    process.env[variable] = 'sk-from-env-0000';
    expect(await send(h, 'two')).toMatchObject({ run: { status: 'completed', text: 'now it works' } });
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['env-key']);
    await h.close();
  });

  it('skips the profile without cooling it and uses the next one when another profile has its secret', async () => {
    const profiles: RuntimeOptions['authProfiles'] = [
      envProfile,
      { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-two-0000' },
    ];
    const h = createHarness([{ text: 'from p2' }], { authProfiles: profiles });
    expect(await send(h)).toMatchObject({ run: { status: 'completed', text: 'from p2' } });
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p2']);
    expect(h.of('profile.cooldown')).toEqual([]);
    expect(h.of('failover.rotated')).toEqual([]);
    await h.close();
  });
});
