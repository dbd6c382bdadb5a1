import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, createSqliteLedger, type Ledger, type RuntimeEvent } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { startReplyDelivery, type ReplyTarget, type SentLookup } from 'agentlanes/grammy';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** A platform chat in memory: what was posted, and (optionally) what it can tell about earlier sends. */
function createPlatform(lookup?: (text: string) => SentLookup, failing = false) {
  const posted: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const target: ReplyTarget = {
    post(text) {
      if (failing)
        return Promise.reject(new Error('Call to https://api.telegram.org/bot123:SECRET/x failed'));
      posted.push(text);
      for (const waiter of waiters.filter((candidate) => posted.length >= candidate.count)) waiter.resolve();
      return Promise.resolve(`m${posted.length}`);
    },
    ...(lookup === undefined ? {} : { lookup: (text: string) => Promise.resolve(lookup(text)) }),
  };
  const postedCount = (count: number): Promise<void> =>
    posted.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }));
  return { target, posted, postedCount };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A runtime that has answered one message in two blocks ("Alpha block is here." and "Beta block is here."). */
async function answeredRuntime() {
  const clock = fakeClock({ now: 5_000 });
  const ledger: Ledger = createSqliteLedger({ path: tempLedgerPath('delivery') });
  const runtime = createRuntime({
    ledger,
    providers: {
      scripted: scriptedModel(
        [{ text: 'Alpha block is here. Beta block is here.' }, { text: 'Gamma block.' }],
        {
          clock,
        },
      ),
    },
    model: { provider: 'scripted', model: 'm' },
    blocks: { minChars: 10, maxChars: 25 },
    clock,
    ids: sequentialIds(),
  });
  cleanups.push(async () => {
    await runtime.close();
    await ledger.close();
  });
  const session = runtime.session('chat:1');
  await session.send({ id: 'u1', text: 'hi' });
  await session.waitForEnd({ timeoutMs: 10_000 });
  const [run] = await session.runs();
  const runId = run?.runId as string;
  return { clock, ledger, runtime, runId };
}

/** Deliveries of `runId`'s block events by the consumer 'replies'. */
function deliver(base: Awaited<ReturnType<typeof answeredRuntime>>, target: ReplyTarget) {
  const delivery = startReplyDelivery({
    runtime: base.runtime,
    ledger: base.ledger,
    consumer: 'replies',
    clock: base.clock,
    targetFor: (sessionKey) => (sessionKey === 'chat:1' ? target : undefined),
  });
  cleanups.push(() => delivery.stop());
  return delivery;
}

/** The first recorded event of a type (after what the delivery wrote). */
async function eventOf(
  base: { runtime: { events: (options: object) => AsyncIterable<RuntimeEvent> } },
  type: string,
) {
  const controller = new AbortController();
  for await (const event of base.runtime.events({ signal: controller.signal })) {
    if (event.type === type) {
      controller.abort();
      return event;
    }
  }
  return undefined;
}

describe('startReplyDelivery', () => {
  it('delivers each block once and never again when the consumer comes back', async () => {
    const base = await answeredRuntime();
    const platform = createPlatform();
    const first = deliver(base, platform.target);
    await platform.postedCount(2);
    await first.stop();
    const again = deliver(base, platform.target);
    await base.runtime.session('chat:1').send({ id: 'u2', text: 'more' });
    await platform.postedCount(3);
    await again.stop();
    expect(platform.posted).toEqual(['Alpha block is here.', 'Beta block is here.', 'Gamma block.']);
    expect(
      await base.ledger.getDelivery({ consumer: 'replies', runId: base.runId, blockIndex: 1 }),
    ).toMatchObject({
      status: 'delivered',
      platformMessageId: 'm2',
    });
  });

  it('sends a block found in flight once more when the platform shows no message for it', async () => {
    const base = await answeredRuntime();
    const key = { consumer: 'replies', runId: base.runId, blockIndex: 0 };
    await base.ledger.markSending({ ...key, sessionKey: 'chat:1', at: 1 });
    const platform = createPlatform(() => ({ found: 'absent' }));
    deliver(base, platform.target);
    await platform.postedCount(2);
    expect(platform.posted).toEqual(['Alpha block is here.', 'Beta block is here.']);
    expect(await base.ledger.getDelivery(key)).toMatchObject({
      status: 'delivered',
      platformMessageId: 'm1',
    });
  });

  it('records a block found in flight as delivered when the platform shows its message', async () => {
    const base = await answeredRuntime();
    const key = { consumer: 'replies', runId: base.runId, blockIndex: 0 };
    await base.ledger.markSending({ ...key, sessionKey: 'chat:1', at: 1 });
    const platform = createPlatform(() => ({ found: 'present', platformMessageId: 'old-7' }));
    deliver(base, platform.target);
    await platform.postedCount(1);
    expect(platform.posted).toEqual(['Beta block is here.']);
    expect(await base.ledger.getDelivery(key)).toMatchObject({
      status: 'delivered',
      platformMessageId: 'old-7',
    });
  });

  it('records a block in doubt, with an event, when the platform cannot tell', async () => {
    const base = await answeredRuntime();
    const key = { consumer: 'replies', runId: base.runId, blockIndex: 0 };
    await base.ledger.markSending({ ...key, sessionKey: 'chat:1', at: 1 });
    const platform = createPlatform();
    deliver(base, platform.target);
    const doubt = await eventOf(base, 'delivery.in_doubt');
    await platform.postedCount(1);
    expect(platform.posted).toEqual(['Beta block is here.']);
    expect(doubt).toMatchObject({
      sessionKey: 'chat:1',
      runId: base.runId,
      consumer: 'replies',
      blockIndex: 0,
    });
    expect(await base.ledger.getDelivery(key)).toMatchObject({ status: 'in_doubt' });
  });

  it('records a failed send in doubt with a reason that carries no token', async () => {
    const base = await answeredRuntime();
    const platform = createPlatform(undefined, true);
    deliver(base, platform.target);
    const doubt = await eventOf(base, 'delivery.in_doubt');
    expect(doubt).toMatchObject({ blockIndex: 0 });
    expect(JSON.stringify(doubt)).not.toContain('SECRET');
    expect(platform.posted).toEqual([]);
  });
});

describe('Session.reportDeliveryInDoubt', () => {
  it('refuses bad input with invalid_input and emits nothing', async () => {
    const base = await answeredRuntime();
    const session = base.runtime.session('chat:1');
    await expect(
      session.reportDeliveryInDoubt({ consumer: '', runId: base.runId, blockIndex: 0, reason: 'x' }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    const events = await base.ledger.readEvents({ after: 0 });
    expect(events.some((event) => event.type === 'delivery.in_doubt')).toBe(false);
    expect(events.length).toBeGreaterThan(0);
  });
});
