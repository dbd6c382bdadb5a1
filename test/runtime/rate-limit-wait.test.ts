import { describe, expect, it } from 'vitest';
import {
  createMemoryLedger,
  createRuntime,
  type RuntimeEvent,
  type RuntimeOptions,
  type WaitResult,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type ScriptEntry } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

/** The message of the error a waited-for run ended with. */
function errorMessageOf(result: WaitResult): string | undefined {
  return result.status === 'ended' ? result.run.error?.message : undefined;
}

const oneKey: RuntimeOptions['authProfiles'] = [
  { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' },
];
const rateLimited = (retryAfterMs?: number): ScriptEntry => ({
  error: {
    status: 429,
    message: 'rate limit exceeded',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  },
});

async function send(h: ReturnType<typeof createHarness>, key = 'telegram:1') {
  const chat = h.runtime.session(key);
  await chat.send('hi');
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  return ended;
}

describe('failover when every profile is cooling (failover.maxWaitMs)', () => {
  it('waits out a 30 s cooldown on the clock and retries when the only key is rate limited', async () => {
    const h = createHarness([rateLimited(), { text: 'ok' }], { authProfiles: oneKey });
    const ended = send(h);
    await h.clock.advance(0);
    expect(h.of('failover.waiting')).toMatchObject([
      { provider: 'scripted', model: 'm', profileId: 'p1', waitMs: 30_000, until: 30_000 },
    ]);
    await h.clock.advance(29_999);
    expect(h.model.calls).toBe(1);
    await h.clock.advance(1);
    expect(await ended).toMatchObject({ run: { status: 'completed', text: 'ok' } });
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p1', 'p1']);
    await h.close();
  });

  it('honours a Retry-After shorter than the ladder step as given when the provider sends one', async () => {
    const h = createHarness([rateLimited(7_000), { text: 'ok' }], { authProfiles: oneKey });
    const ended = send(h);
    await h.clock.advance(0);
    expect(h.of('profile.cooldown')).toMatchObject([{ profileId: 'p1', until: 7_000 }]);
    expect(h.of('failover.waiting')).toMatchObject([{ waitMs: 7_000 }]);
    await h.clock.advance(7_000);
    expect(await ended).toMatchObject({ run: { status: 'completed' } });
    await h.close();
  });

  it('makes a new run in another chat wait too, without calling the provider, while the key cools', async () => {
    const h = createHarness((_request, callIndex) => (callIndex === 0 ? rateLimited() : { text: 'ok' }), {
      authProfiles: oneKey,
    });
    const first = send(h, 'telegram:1');
    await h.clock.advance(1_000);
    const second = send(h, 'telegram:2');
    await h.clock.advance(0);
    expect(h.model.calls).toBe(1);
    expect(h.of('failover.waiting').map((event) => [event.sessionKey, event.waitMs])).toEqual([
      ['telegram:1', 30_000],
      ['telegram:2', 29_000],
    ]);
    await h.clock.advance(29_000);
    expect(await first).toMatchObject({ run: { status: 'completed' } });
    expect(await second).toMatchObject({ run: { status: 'completed' } });
    expect(h.model.calls).toBe(3);
    await h.close();
  });

  it('fails at once with provider_rate_limit when the soonest profile is back after maxWaitMs', async () => {
    const h = createHarness([rateLimited(120_000)], { authProfiles: oneKey });
    const result = await send(h);
    expect(result).toMatchObject({ run: { status: 'failed', error: { code: 'provider_rate_limit' } } });
    expect(errorMessageOf(result)).toContain('beyond failover.maxWaitMs (60000 ms)');
    expect(h.of('failover.waiting')).toEqual([]);
    expect(h.model.calls).toBe(1);
    await h.close();
  });

  it('caps a Retry-After longer than the ladder at 5 min when the provider asks for an hour', async () => {
    const h = createHarness([rateLimited(3_600_000)], { authProfiles: oneKey });
    await send(h);
    expect(h.of('profile.cooldown')).toMatchObject([{ until: 300_000 }]);
    await h.close();
  });

  it('ends the run as aborted without another call when it is aborted during the wait', async () => {
    const h = createHarness([rateLimited(), { text: 'unused' }], { authProfiles: oneKey });
    const chat = h.runtime.session('telegram:1');
    await chat.send('hi');
    await h.clock.advance(1_000);
    expect(h.of('failover.waiting')).toHaveLength(1);
    const ended = chat.waitForEnd();
    await chat.abort({ reason: 'user sent /stop' });
    expect(await ended).toMatchObject({ run: { status: 'aborted' } });
    await h.clock.advance(60_000);
    expect(h.model.calls).toBe(1);
    await h.close();
  });

  it('waits for the soonest profile over every candidate model when all of them are cooling', async () => {
    const clock = fakeClock({ now: 0 });
    const primary = scriptedModel([rateLimited(20_000), { text: 'unused' }], { clock });
    const backup = scriptedModel([rateLimited(10_000), { text: 'from the backup' }], { clock });
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: { scripted: primary, backup },
      model: { provider: 'scripted', model: 'm', fallbacks: [{ provider: 'backup', model: 'm2' }] },
      authProfiles: [...oneKey, { id: 'b1', provider: 'backup', type: 'api_key', secret: 'sk-backup-00' }],
      clock,
      ids: sequentialIds(),
    });
    const events: RuntimeEvent[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const event of runtime.events({ signal: stop.signal })) events.push(event);
    })();
    const chat = runtime.session('telegram:1');
    await chat.send('hi');
    const ended = chat.waitForEnd({ timeoutMs: 600_000 });
    await clock.advance(10_000);
    expect(await ended).toMatchObject({ run: { status: 'completed', text: 'from the backup' } });
    expect(events.filter((event) => event.type === 'failover.waiting')).toMatchObject([
      { provider: 'backup', model: 'm2', profileId: 'b1', waitMs: 10_000, until: 10_000 },
    ]);
    expect([primary.calls, backup.calls]).toEqual([1, 2]);
    const closing = runtime.close();
    await clock.runAll();
    await closing;
    stop.abort();
    await reading;
  });
});
