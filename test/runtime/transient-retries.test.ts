import { describe, expect, it } from 'vitest';
import type { RuntimeOptions } from 'agentlanes';
import type { ScriptEntry } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

// 503 classifies as `timeout`: a transient failure, retried on the same model when no profile can rotate.
const unavailable = (retryAfterMs?: number): ScriptEntry => ({
  error: {
    status: 503,
    message: 'service unavailable',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  },
});

/** A harness whose model answers from `entries` (then `fallback`) and records the fake time and model of each call. */
function recorded(entries: ScriptEntry[], fallback: ScriptEntry, options: Partial<RuntimeOptions> = {}) {
  const calls: { at: number; model: string }[] = [];
  const h = createHarness((request, index) => {
    calls.push({ at: h.clock.now(), model: request.model });
    return entries[index] ?? fallback;
  }, options);
  return { h, calls };
}

async function sendAndSettle(h: ReturnType<typeof createHarness>, settleMs: number) {
  await h.runtime.session('telegram:1').send({ id: 'a', text: 'hi' });
  await h.clock.advance(settleMs);
  return h.of('run.ended');
}

describe('the transient retry of a model call', () => {
  it('makes 4 attempts (3 retries) 250, 500 and 1000 ms apart, then fails, when every attempt fails', async () => {
    const { h, calls } = recorded([], unavailable());
    const ended = await sendAndSettle(h, 600_000);
    // random() is 0.5 in the harness: floor(0.5 × min(30 s, 500 ms × 2^retry)).
    expect(calls.map((call) => call.at)).toEqual([0, 250, 750, 1750]);
    expect(ended).toMatchObject([{ status: 'failed', error: { code: 'provider_unavailable' }, at: 1750 }]);
    await h.close();
  });

  it('waits up to the full ceiling of 500 ms × 2^retry when random() is just below 1', async () => {
    const { h, calls } = recorded([], unavailable(), { random: () => 0.9999 });
    await sendAndSettle(h, 600_000);
    expect(calls.map((call) => call.at)).toEqual([0, 499, 1498, 3497]);
    await h.close();
  });

  it('completes the run when the third retry succeeds', async () => {
    const { h, calls } = recorded([unavailable(), unavailable(), unavailable()], { text: 'ok' });
    const ended = await sendAndSettle(h, 600_000);
    expect(calls).toHaveLength(4);
    expect(ended).toMatchObject([{ status: 'completed', text: 'ok', at: 1750 }]);
    await h.close();
  });

  it('waits the Retry-After instead, up to 60 s, when it is longer than the backoff', async () => {
    const { h, calls } = recorded([unavailable(5_000), unavailable(120_000), unavailable(1)], { text: 'ok' });
    await sendAndSettle(h, 600_000);
    // max(250, 5000), then max(500, min(120000, 60000)), then max(1000, 1).
    expect(calls.map((call) => call.at)).toEqual([0, 5_000, 65_000, 66_000]);
    await h.close();
  });

  it('gives each fallback model its own 3 retries when every model fails transiently', async () => {
    const { h, calls } = recorded([], unavailable(), {
      model: { provider: 'scripted', model: 'm', fallbacks: [{ provider: 'scripted', model: 'm2' }] },
    });
    const ended = await sendAndSettle(h, 600_000);
    expect(calls.map((call) => [call.model, call.at])).toEqual([
      ['m', 0],
      ['m', 250],
      ['m', 750],
      ['m', 1750],
      ['m2', 1750],
      ['m2', 2000],
      ['m2', 2500],
      ['m2', 3500],
    ]);
    expect(ended).toMatchObject([{ status: 'failed', error: { code: 'provider_unavailable' } }]);
    await h.close();
  });

  it('stops at clamp(24 + 8 × profiles, 32, 160) = 40 attempts when 2 profiles keep failing', async () => {
    const { h, calls } = recorded([], unavailable(), {
      authProfiles: [
        { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' },
        { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-two-0000' },
      ],
      failover: { maxWaitMs: 3_600_000 },
      limits: { runTimeoutMs: 24 * 3_600_000 },
    });
    const ended = await sendAndSettle(h, 24 * 3_600_000);
    expect(calls).toHaveLength(40);
    expect(ended).toMatchObject([{ status: 'failed' }]);
    await h.close();
  });

  it('stops at 32 attempts over the fallback models when there are no profiles', async () => {
    const fallbacks = Array.from({ length: 9 }, (_, index) => ({ provider: 'scripted', model: `f${index}` }));
    const { h, calls } = recorded([], unavailable(), {
      model: { provider: 'scripted', model: 'm', fallbacks },
    });
    const ended = await sendAndSettle(h, 600_000);
    // 4 attempts per model: 8 models use up the budget, the ninth and tenth are never called.
    expect(calls).toHaveLength(32);
    expect(new Set(calls.map((call) => call.model)).size).toBe(8);
    expect(ended).toMatchObject([{ status: 'failed', error: { code: 'provider_unavailable' } }]);
    await h.close();
  });
});
