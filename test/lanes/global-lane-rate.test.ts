import { describe, expect, it, vi } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { RuntimeError } from '../../src/core/errors.js';
import { createGlobalLane } from '../../src/lanes/global-lane.js';
import type { LaneWaitInfo } from '../../src/lanes/global-lane.js';

/** Start `count` tasks that record the fake time they started at and then never finish until released. */
function startRecorded(run: (task: () => Promise<void>) => Promise<void>, now: () => number, count: number) {
  const startedAt: number[] = [];
  const release = createDeferred<void>();
  const results = Array.from({ length: count }, () =>
    run(() => {
      startedAt.push(now());
      return release.promise;
    }),
  );
  return { startedAt, release: () => release.resolve(), results };
}

describe('createGlobalLane start rate', () => {
  it('starts at most `limit` tasks in any window of intervalMs when starts are spread out', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 2, intervalMs: 1000 }, clock });
    const startedAt: number[] = [];
    const run = () =>
      lane.run(() => {
        startedAt.push(clock.now());
        return Promise.resolve();
      });
    const results = [run()];
    await clock.advance(600);
    results.push(run(), run(), run());
    await clock.advance(0);
    expect(startedAt).toEqual([0, 600]);
    await clock.advance(399);
    expect(startedAt).toEqual([0, 600]);
    await clock.advance(1);
    expect(startedAt).toEqual([0, 600, 1000]);
    await clock.advance(599);
    expect(startedAt).toEqual([0, 600, 1000]);
    await clock.advance(1);
    expect(startedAt).toEqual([0, 600, 1000, 1600]);
    await Promise.all(results);
  });

  it('counts a task waiting for the rate as pending, not running, when it holds a concurrency slot', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ concurrency: 3, rate: { limit: 1, intervalMs: 1000 }, clock });
    const tasks = startRecorded(
      (task) => lane.run(task),
      () => clock.now(),
      4,
    );
    await clock.advance(0);
    expect(tasks.startedAt).toEqual([0]);
    expect(lane.stats()).toEqual({ global: { pending: 3, running: 1 } });
    await clock.advance(1000);
    expect(tasks.startedAt).toEqual([0, 1000]);
    expect(lane.stats()).toEqual({ global: { pending: 2, running: 2 } });
    await clock.advance(1000);
    // The third starts on the rate; the fourth now waits for a concurrency slot as well.
    expect(tasks.startedAt).toEqual([0, 1000, 2000]);
    expect(lane.stats()).toEqual({ global: { pending: 1, running: 3 } });
    tasks.release();
    await clock.advance(1000);
    expect(tasks.startedAt).toEqual([0, 1000, 2000, 3000]);
    await Promise.all(tasks.results);
  });

  it('rejects with the reason and never runs the task when its signal aborts while it waits for the rate', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 1, intervalMs: 1000 }, clock });
    const first = lane.run(() => Promise.resolve('first'));
    const controller = new AbortController();
    const reason = new RuntimeError('cancelled', 'user sent /stop');
    const aborted = vi.fn(() => Promise.resolve('never'));
    const waiting = lane.run(aborted, { signal: controller.signal });
    const next = lane.run(() => Promise.resolve(clock.now()));
    await clock.advance(0);
    expect(lane.stats().global).toEqual({ pending: 2, running: 0 });

    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(lane.stats().global).toEqual({ pending: 1, running: 0 });
    await clock.advance(1000);
    await expect(first).resolves.toBe('first');
    await expect(next).resolves.toBe(1000);
    expect(aborted).not.toHaveBeenCalled();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('leaves no timer behind when the only task waiting for the rate aborts', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 1, intervalMs: 1000 }, clock });
    await lane.run(() => Promise.resolve());
    const controller = new AbortController();
    const waiting = lane.run(() => Promise.resolve(), { signal: controller.signal });
    await clock.advance(0);
    expect(clock.pendingTimers()).toBe(1);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('limits a provider lane by its own rate apart from the shared lane', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({
      rate: { limit: 1, intervalMs: 1000 },
      perProvider: { openai: { rate: { limit: 2, intervalMs: 500 } } },
      clock,
    });
    const shared = startRecorded(
      (task) => lane.run(task),
      () => clock.now(),
      2,
    );
    const openai = startRecorded(
      (task) => lane.run(task, { provider: 'openai' }),
      () => clock.now(),
      4,
    );
    await clock.advance(500);
    expect(shared.startedAt).toEqual([0]);
    expect(openai.startedAt).toEqual([0, 0, 500, 500]);
    await clock.advance(500);
    expect(shared.startedAt).toEqual([0, 1000]);
    shared.release();
    openai.release();
    await Promise.all([...shared.results, ...openai.results]);
  });

  it('reports the time spent waiting for the rate and the queue position when it passed warnAfterMs', async () => {
    const clock = fakeClock();
    const waits: LaneWaitInfo[] = [];
    const lane = createGlobalLane({
      rate: { limit: 1, intervalMs: 1000 },
      warnAfterMs: 500,
      clock,
      onWaited: (info) => waits.push(info),
    });
    const results = [1, 2, 3].map(() => lane.run(() => Promise.resolve()));
    await clock.advance(2000);
    await Promise.all(results);
    expect(waits).toEqual([
      { lane: 'global', waitedMs: 1000, position: 1 },
      { lane: 'global', waitedMs: 2000, position: 2 },
    ]);
  });

  it('still starts tasks waiting for the rate and then resolves when the lane is closed', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 1, intervalMs: 1000 }, clock });
    const results = [1, 2, 3].map((value) => lane.run(() => Promise.resolve(value)));
    let closed = false;
    const closing = lane.close().then(() => {
      closed = true;
    });
    await clock.advance(1999);
    expect(closed).toBe(false);
    await clock.advance(1);
    await closing;
    await expect(Promise.all(results)).resolves.toEqual([1, 2, 3]);
  });
});
