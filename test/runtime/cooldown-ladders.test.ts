import { describe, expect, it } from 'vitest';
import { createHarness } from '../support/runtime-harness.js';

const oneKey = [{ id: 'p1', provider: 'scripted', type: 'api_key' as const, secret: 'sk-one-0000' }];
const hour = 3_600_000;

/** Run one message at the harness's current time; the scripted model fails it with `status`. */
async function failAt(h: ReturnType<typeof createHarness>, at: number) {
  await h.clock.advance(at - h.clock.now());
  const chat = h.runtime.session('telegram:1');
  await chat.send(`at ${at}`);
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  return ended;
}

describe('auth profile ladders on the fake clock', () => {
  it('cools 30 s, 60 s, 5 min, 5 min, and starts over after 24 h without a failure', async () => {
    const h = createHarness(() => ({ error: { status: 429, message: 'rate limit' } }), {
      authProfiles: oneKey,
      queue: { mode: 'followup', debounceMs: 0 },
      failover: { maxWaitMs: 0 }, // fail at once instead of waiting out the cooldown
    });
    const times = [0, 30_000, 90_000, 390_000, 690_000, 690_000 + 24 * hour];
    for (const at of times) {
      expect(await failAt(h, at)).toMatchObject({ run: { error: { code: 'provider_rate_limit' } } });
    }
    expect(h.of('profile.cooldown').map((event) => event.until - event.at)).toEqual([
      30_000, 60_000, 300_000, 300_000, 300_000, 30_000,
    ]);
    await h.close();
  });

  it('does not extend a cooldown for a failure inside it (every profile cooling: no call at all)', async () => {
    const h = createHarness(() => ({ error: { status: 429, message: 'rate limit' } }), {
      authProfiles: oneKey,
      queue: { mode: 'followup', debounceMs: 0 },
      failover: { maxWaitMs: 0 }, // fail at once instead of waiting out the cooldown
    });
    await failAt(h, 0);
    expect(await failAt(h, 10_000)).toMatchObject({
      run: { status: 'failed', error: { code: 'provider_rate_limit' } },
    });
    expect(h.model.calls).toBe(1);
    expect(h.of('profile.cooldown').map((event) => event.until)).toEqual([30_000]);
    await h.close();
  });

  it('disables a profile for 5 h, 10 h, 20 h, then 24 h on billing failures', async () => {
    const h = createHarness(() => ({ error: { status: 402, message: 'insufficient credits' } }), {
      authProfiles: oneKey,
      queue: { mode: 'followup', debounceMs: 0 },
    });
    let at = 0;
    for (const expected of [5, 10, 20, 24]) {
      expect(await failAt(h, at)).toMatchObject({ run: { error: { code: 'provider_billing' } } });
      at += expected * hour;
    }
    expect(h.of('profile.cooldown').map((event) => (event.until - event.at) / hour)).toEqual([5, 10, 20, 24]);
    await h.close();
  });
});
