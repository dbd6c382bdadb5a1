import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type RuntimeOptions, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

const twoKeys: RuntimeOptions['authProfiles'] = [
  { id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' },
  { id: 'p2', provider: 'scripted', type: 'api_key', secret: 'sk-two-0000' },
];

async function runOnce(h: ReturnType<typeof createHarness>, text = 'hi', key = 'telegram:1') {
  const chat = h.runtime.session(key);
  await chat.send({ text });
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  return ended;
}

describe('the attempt loop (auth profiles and failover)', () => {
  it('rotates to the next profile on a rate limit and cools the first for 30 s', async () => {
    const h = createHarness([{ error: { status: 429, message: 'rate limit exceeded' } }, { text: 'ok' }], {
      authProfiles: twoKeys,
    });
    expect(await runOnce(h)).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'ok' } });
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p1', 'p2']);
    expect(h.of('failover.rotated')).toMatchObject([
      { fromProfile: 'p1', toProfile: 'p2', reason: 'rate_limit' },
    ]);
    expect(h.of('profile.cooldown')).toMatchObject([
      { profileId: 'p1', reason: 'rate_limit', until: 30_000 },
    ]);
    await h.close();
  });

  it('skips a cooling profile on the next run and uses it again once the cooldown is over', async () => {
    const h = createHarness(
      [{ error: { status: 429, message: 'rate limit' } }, { text: 'a' }, { text: 'b' }, { text: 'c' }],
      { authProfiles: twoKeys, queue: { mode: 'followup', debounceMs: 0 } },
    );
    await runOnce(h, 'one');
    await h.clock.advance(10_000);
    await runOnce(h, 'two');
    await h.clock.advance(25_000); // t = 35 s: p1's 30 s cooldown is over, and p1 was used least recently
    await runOnce(h, 'three');
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p1', 'p2', 'p2', 'p1']);
    await h.close();
  });

  it('falls back to the next model when every profile of the first is cooling or failed', async () => {
    const clock = fakeClock({ now: 0 });
    const primary = scriptedModel([{ error: { status: 429, message: 'too many requests' } }], { clock });
    const backup = scriptedModel([{ text: 'from the fallback' }], { clock });
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: { scripted: primary, backup },
      model: { provider: 'scripted', model: 'm', fallbacks: [{ provider: 'backup', model: 'm2' }] },
      authProfiles: [{ id: 'p1', provider: 'scripted', type: 'api_key', secret: 'sk-one-0000' }],
      clock,
      ids: sequentialIds(),
    });
    const events: string[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const event of runtime.events({ signal: stop.signal })) {
        if (event.type === 'failover.fallback')
          events.push(`${event.fromModel}->${event.toModel}:${event.reason}`);
      }
    })();
    const chat = runtime.session('telegram:1');
    await chat.send('hi');
    const ended = chat.waitForEnd();
    await clock.advance(0);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'from the fallback' },
    });
    expect(backup.requests.map((request) => [request.model, request.profileId])).toEqual([['m2', undefined]]);
    await clock.advance(0);
    expect(events).toEqual(['m->m2:rate_limit']);
    const closing = runtime.close();
    await clock.runAll();
    await closing;
    stop.abort();
    await reading;
  });

  it('fails with provider_rate_limit when every profile cools for longer than failover.maxWaitMs', async () => {
    const h = createHarness(
      [{ error: { status: 429, message: 'rate limit' } }, { error: { status: 429, message: 'rate limit' } }],
      { authProfiles: twoKeys, failover: { maxWaitMs: 10_000 } },
    );
    expect(await runOnce(h)).toMatchObject({
      status: 'ended',
      run: {
        status: 'failed',
        error: {
          code: 'provider_rate_limit',
          message:
            'rate limit; the soonest profile (p1) is back in 30000 ms, beyond failover.maxWaitMs (10000 ms)',
        },
      },
    });
    expect(h.of('failover.waiting')).toEqual([]);
    expect(h.of('profile.cooldown').map((event) => event.profileId)).toEqual(['p1', 'p2']);
    await h.close();
  });

  it('lowers the thinking level and retries when the model does not support it', async () => {
    const message =
      "Unsupported value: 'high'. Supported values are: 'low' and 'medium' for reasoning effort.";
    const h = createHarness([{ error: { status: 400, message } }, { text: 'ok' }], {
      model: { provider: 'scripted', model: 'm', thinking: 'high' },
    });
    expect(await runOnce(h)).toMatchObject({ run: { status: 'completed' } });
    expect(h.model.requests.map((request) => request.thinking)).toEqual(['high', 'medium']);
    expect(h.of('thinking.lowered')).toMatchObject([{ from: 'high', to: 'medium' }]);
    await h.close();
  });

  it('retries a transient failure after a full-jitter backoff on the injected clock', async () => {
    const h = createHarness([{ error: { status: 500, message: 'upstream broke' } }, { text: 'ok' }]);
    const chat = h.runtime.session('telegram:1');
    await chat.send('hi');
    await h.clock.advance(0);
    expect(h.model.calls).toBe(1);
    await h.clock.advance(249); // random 0.5 × 500 ms base = 250 ms
    expect(h.model.calls).toBe(1);
    await h.clock.advance(1);
    expect(h.model.calls).toBe(2);
    await h.close();
  });

  it('never retries a user abort and never cools a profile for it', async () => {
    const h = createHarness([{ hang: true }, { text: 'unused' }], { authProfiles: twoKeys });
    const chat = h.runtime.session('telegram:1');
    await chat.send('hi');
    await h.clock.advance(10);
    const ended = chat.waitForEnd();
    await chat.abort({ reason: 'user sent /stop' });
    expect(await ended).toMatchObject({ run: { status: 'aborted' } });
    expect(h.model.calls).toBe(1);
    expect(h.of('profile.cooldown')).toEqual([]);
    expect(h.of('failover.rotated')).toEqual([]);
    await h.close();
  });

  it('reports the cost of each attempt from the price table and totals it on the run', async () => {
    const h = createHarness(
      [
        {
          text: 'first',
          usage: { inputTokens: 1000, outputTokens: 500 },
          toolCalls: [{ name: 'nope', args: {} }],
        },
        { text: 'second', usage: { inputTokens: 2000, outputTokens: 100 } },
      ],
      { prices: { 'scripted/m': { input: 3, output: 15 } } },
    );
    await runOnce(h);
    const costs = h.of('cost.updated');
    // (1000 × $3 + 500 × $15) / 1M and (2000 × $3 + 100 × $15) / 1M
    expect(costs.map((event) => [event.cost, event.priced])).toEqual([
      [0.0105, true],
      [0.0075, true],
    ]);
    expect(costs[1]?.cumulativeCost).toBeCloseTo(0.018, 10);
    const runs = await h.runtime.session('telegram:1').runs();
    expect(runs[0]?.cost).toBeCloseTo(0.018, 10);
    await h.close();
  });

  it('counts an unknown price as 0 and says so', async () => {
    const h = createHarness([{ text: 'ok', usage: { inputTokens: 10, outputTokens: 5 } }]);
    await runOnce(h);
    expect(h.of('cost.updated')).toMatchObject([
      { cost: 0, cumulativeCost: 0, priced: false, inputTokens: 10 },
    ]);
    await h.close();
  });
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('auth profile state and secrets', () => {
  it('keeps a cooldown across a restart on the same ledger', async () => {
    const ledger = createMemoryLedger();
    const shared: Ledger = { ...ledger, close: () => Promise.resolve() };
    const script: Script = [
      { error: { status: 429, message: 'rate limit' } },
      { text: 'ok' },
      { text: 'again' },
    ];
    const first = createHarness(script, { authProfiles: twoKeys, ledger: shared });
    await runOnce(first);
    await first.close();
    // A restarted process makes fresh ids; counting from 1 again would collide with the first process's runs.
    const restartIds = sequentialIds();
    const second = createHarness([{ text: 'after restart' }], {
      authProfiles: twoKeys,
      ledger: shared,
      ids: (prefix) => restartIds(`${prefix}_after`),
    });
    await second.clock.advance(1_000);
    await runOnce(second);
    expect(second.model.requests.map((request) => request.profileId)).toEqual(['p2']);
    await second.close();
  });

  it('never writes a secret to the ledger file or an event, even when the provider echoes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentlanes-secret-'));
    dirs.push(dir);
    const path = join(dir, 'ledger.db');
    const secret = 'sk-live-7f3c9a1e5b2d4c6f8a0e';
    process.env['AGENTLANES_TEST_KEY'] = secret;
    try {
      const h = createHarness(
        [
          { error: { status: 401, message: `Incorrect API key provided: ${secret}` } },
          { error: { status: 500, message: `upstream rejected key ${secret}` } },
          { error: { status: 500, message: `still ${secret}` } },
          { error: { status: 500, message: `and ${secret}` } },
          { error: { status: 500, message: `last ${secret}` } },
        ],
        {
          ledger: { path },
          authProfiles: [
            { id: 'env-key', provider: 'scripted', type: 'api_key', secret: { env: 'AGENTLANES_TEST_KEY' } },
          ],
        },
      );
      const chat = h.runtime.session('telegram:1');
      await chat.send('hi');
      const ended = chat.waitForEnd({ timeoutMs: 600_000 });
      await h.clock.advance(60_000);
      const result = await ended;
      expect(result).toMatchObject({ status: 'ended', run: { status: 'failed' } });
      expect(JSON.stringify(result)).not.toContain(secret);
      expect(JSON.stringify(h.events)).not.toContain(secret);
      expect(JSON.stringify(h.events)).toContain('***');
      await h.close();
      const bytes = Buffer.concat(
        [path, `${path}-wal`].flatMap((file) => {
          try {
            return [readFileSync(file)];
          } catch {
            return [];
          }
        }),
      );
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    } finally {
      delete process.env['AGENTLANES_TEST_KEY'];
    }
  });
});

describe('Session.preferProfile', () => {
  it("tries the session's preferred profile first, and the default order again once it is cleared", async () => {
    const h = createHarness([{ text: 'a' }, { text: 'b' }, { text: 'c' }], {
      authProfiles: twoKeys,
      queue: { mode: 'followup', debounceMs: 0 },
    });
    const chat = h.runtime.session('telegram:1');
    await chat.preferProfile('p2');
    await runOnce(h, 'one');
    await runOnce(h, 'two');
    await chat.preferProfile(null);
    await runOnce(h, 'three');
    // p2 twice by preference; then the default order puts p1 first (never used, so least recently used).
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p2', 'p2', 'p1']);
    await h.close();
  });

  it('refuses an unknown profile with invalid_input and changes nothing', async () => {
    const h = createHarness([{ text: 'a' }], { authProfiles: twoKeys });
    const refused = await h.runtime
      .session('telegram:1')
      .preferProfile('nope')
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_input' });
    await runOnce(h);
    expect(h.model.requests.map((request) => request.profileId)).toEqual(['p1']);
    await h.close();
  });
});
