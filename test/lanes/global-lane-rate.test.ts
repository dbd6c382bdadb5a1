import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { RuntimeError } from '../../src/core/errors.js';
import { createGlobalLane, type GlobalLane } from '../../src/lanes/global-lane.js';
import type { LaneWaitInfo } from '../../src/lanes/global-lane.js';

/** Make `count` model requests through `lane.pace`, each recording the fake time it was let through. */
function request(lane: GlobalLane, now: () => number, count: number, provider?: string) {
  const sentAt: number[] = [];
  const results = Array.from({ length: count }, async () => {
    const paced = lane.pace(provider);
    if (paced !== undefined) await paced;
    sentAt.push(now());
  });
  return { sentAt, results };
}

describe('createGlobalLane request rate (pace)', () => {
  it('lets at most `limit` requests through in any window of intervalMs when they are spread out', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 2, intervalMs: 1000 }, clock });
    const first = request(lane, () => clock.now(), 1);
    await clock.advance(600);
    const later = request(lane, () => clock.now(), 3);
    const sentAt = () => [...first.sentAt, ...later.sentAt];
    await clock.advance(0);
    expect(sentAt()).toEqual([0, 600]);
    await clock.advance(399);
    expect(sentAt()).toEqual([0, 600]);
    await clock.advance(1);
    expect(sentAt()).toEqual([0, 600, 1000]);
    await clock.advance(599);
    expect(sentAt()).toEqual([0, 600, 1000]);
    await clock.advance(1);
    expect(sentAt()).toEqual([0, 600, 1000, 1600]);
    await Promise.all([...first.results, ...later.results]);
  });

  it('answers undefined (nothing to await) while a start is free, and counts each request, not each run', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ concurrency: 1, rate: { limit: 3, intervalMs: 1000 }, clock });
    const release = createDeferred<void>();
    const sentAt: number[] = [];
    // One run holds the lane's only slot and makes four model requests: the fourth waits for the rate.
    const run = lane.run(async () => {
      for (let call = 0; call < 4; call++) {
        const paced = lane.pace(undefined);
        if (call < 3) expect(paced).toBeUndefined();
        if (paced !== undefined) await paced;
        sentAt.push(clock.now());
      }
      await release.promise;
    });
    await clock.advance(0);
    expect(sentAt).toEqual([0, 0, 0]);
    expect(lane.stats()).toEqual({ global: { pending: 0, running: 1 } });
    await clock.advance(1000);
    expect(sentAt).toEqual([0, 0, 0, 1000]);
    release.resolve();
    await run;
  });

  it('rejects with the reason and lets the next request through when a waiting request is aborted', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 1, intervalMs: 1000 }, clock });
    expect(lane.pace(undefined)).toBeUndefined();
    const controller = new AbortController();
    const reason = new RuntimeError('cancelled', 'user sent /stop');
    const waiting = lane.pace(undefined, { signal: controller.signal });
    const next = lane.pace(undefined)?.then(() => clock.now());
    await clock.advance(0);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await clock.advance(1000);
    await expect(next).resolves.toBe(1000);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects at once when the signal already aborted', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 1, intervalMs: 1000 }, clock });
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(lane.pace(undefined, { signal: controller.signal })).rejects.toThrow('gone');
  });

  it('leaves no timer behind when the only request waiting for the rate aborts', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 1, intervalMs: 1000 }, clock });
    expect(lane.pace(undefined)).toBeUndefined();
    const controller = new AbortController();
    const waiting = lane.pace(undefined, { signal: controller.signal });
    await clock.advance(0);
    expect(clock.pendingTimers()).toBe(1);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('paces a provider with its own lane by its own rate apart from the shared lane', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({
      rate: { limit: 1, intervalMs: 1000 },
      perProvider: { openai: { rate: { limit: 2, intervalMs: 500 } } },
      clock,
    });
    const shared = request(lane, () => clock.now(), 2);
    const openai = request(lane, () => clock.now(), 4, 'openai');
    await clock.advance(500);
    expect(shared.sentAt).toEqual([0]);
    expect(openai.sentAt).toEqual([0, 0, 500, 500]);
    await clock.advance(500);
    expect(shared.sentAt).toEqual([0, 1000]);
    await Promise.all([...shared.results, ...openai.results]);
  });

  it('reports the time a request waited for the rate and its position when it passed warnAfterMs', async () => {
    const clock = fakeClock();
    const waits: LaneWaitInfo[] = [];
    const lane = createGlobalLane({
      rate: { limit: 1, intervalMs: 1000 },
      warnAfterMs: 500,
      clock,
      onWaited: (info) => waits.push(info),
    });
    const requests = request(lane, () => clock.now(), 3);
    await clock.advance(2000);
    await Promise.all(requests.results);
    expect(waits).toEqual([
      { lane: 'global', waitedMs: 1000, position: 1 },
      { lane: 'global', waitedMs: 2000, position: 2 },
    ]);
  });

  it('reports a wait to the request own onWaited instead of the lane one when it has one', async () => {
    const clock = fakeClock();
    const laneWaits: LaneWaitInfo[] = [];
    const ownWaits: LaneWaitInfo[] = [];
    const lane = createGlobalLane({
      rate: { limit: 1, intervalMs: 1000 },
      warnAfterMs: 0,
      clock,
      onWaited: (info) => laneWaits.push(info),
    });
    expect(lane.pace(undefined)).toBeUndefined();
    const waiting = lane.pace(undefined, { onWaited: (info) => ownWaits.push(info) });
    await clock.advance(1000);
    await waiting;
    expect(ownWaits).toEqual([{ lane: 'global', waitedMs: 1000, position: 1 }]);
    expect(laneWaits).toEqual([]);
  });
});
