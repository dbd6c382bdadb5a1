import { describe, expect, it, vi } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import type { Clock } from '../../src/core/clock.js';
import { createDeferred } from '../../src/core/deferred.js';
import type { Deferred } from '../../src/core/deferred.js';
import { isRuntimeError, RuntimeError } from '../../src/core/errors.js';
import { createGlobalLane } from '../../src/lanes/global-lane.js';
import type { GlobalLaneOptions, LaneWaitInfo } from '../../src/lanes/global-lane.js';

/** A clock whose time only moves when the test sets it; the lane only reads `now()`. */
function createManualClock(): Clock & { set(time: number): void } {
  let time = 0;
  return {
    now: () => time,
    set: (next) => {
      time = next;
    },
    setTimeout: () => undefined,
    clearTimeout: () => undefined,
    sleep: () => Promise.resolve(),
  };
}

/** Let p-queue's microtask hops (it frees slots in a microtask) settle. */
async function flush(): Promise<void> {
  for (let turn = 0; turn < 20; turn += 1) await Promise.resolve();
}

/** Tasks that block on their own gate and record how many run at once. */
function createGatedTasks(count: number) {
  let running = 0;
  let maximum = 0;
  const started: number[] = [];
  const gates: Deferred<void>[] = Array.from({ length: count }, () => createDeferred<void>());
  const tasks = gates.map((gate, index) => async () => {
    running += 1;
    maximum = Math.max(maximum, running);
    started.push(index);
    await gate.promise;
    running -= 1;
    return index;
  });
  return { tasks, gates, started, maximum: () => maximum };
}

describe('createGlobalLane', () => {
  it('never runs more tasks than its concurrency when more are queued', async () => {
    const lane = createGlobalLane({ concurrency: 3, clock: createManualClock() });
    const { tasks, gates, started, maximum } = createGatedTasks(10);
    const results = tasks.map((task) => lane.run(task));
    await flush();
    expect(started).toEqual([0, 1, 2]);
    expect(lane.stats()).toEqual({ global: { pending: 7, running: 3 } });

    for (const gate of gates) {
      gate.resolve();
      await flush();
    }
    await expect(Promise.all(results)).resolves.toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(maximum()).toBe(3);
    expect(lane.stats()).toEqual({ global: { pending: 0, running: 0 } });
  });

  it('runs eight tasks at once when concurrency is not given', async () => {
    const lane = createGlobalLane({ clock: createManualClock() });
    const { tasks, gates, started } = createGatedTasks(10);
    const results = tasks.map((task) => lane.run(task));
    await flush();
    expect(started).toHaveLength(8);
    expect(lane.stats()).toEqual({ global: { pending: 2, running: 8 } });
    for (const gate of gates) gate.resolve();
    await Promise.all(results);
  });

  it('lets `limit` model requests through per interval on the injected clock, not `limit` runs', async () => {
    const clock = fakeClock();
    const lane = createGlobalLane({ rate: { limit: 2, intervalMs: 1000 }, clock });
    const sentAt: number[] = [];
    // Six runs start at once (the rate does not hold runs back); each makes one model request.
    const results = Array.from({ length: 6 }, () =>
      lane.run(async () => {
        const paced = lane.pace(undefined);
        if (paced !== undefined) await paced;
        sentAt.push(clock.now());
      }),
    );
    await clock.advance(0);
    expect(sentAt).toEqual([0, 0]);
    // Two runs made their request and ended; four run, waiting for theirs (none waits for a slot).
    expect(lane.stats()).toEqual({ global: { pending: 0, running: 4 } });
    await clock.advance(999);
    expect(sentAt).toEqual([0, 0]);
    await clock.advance(1);
    expect(sentAt).toEqual([0, 0, 1000, 1000]);
    await clock.advance(1000);
    expect(sentAt).toEqual([0, 0, 1000, 1000, 2000, 2000]);
    await Promise.all(results);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('queues a configured provider apart from the shared lane when it has its own entry', async () => {
    const lane = createGlobalLane({
      concurrency: 1,
      perProvider: { openai: { concurrency: 1 } },
      clock: createManualClock(),
    });
    const { tasks, gates, started } = createGatedTasks(4);
    const [sharedTask, openaiTask, secondOpenaiTask, unconfiguredTask] = tasks;
    if (!sharedTask || !openaiTask || !secondOpenaiTask || !unconfiguredTask) throw new Error('setup');
    const results = [
      lane.run(sharedTask),
      lane.run(openaiTask, { provider: 'openai' }),
      lane.run(secondOpenaiTask, { provider: 'openai' }),
      lane.run(unconfiguredTask, { provider: 'anthropic' }),
    ];
    await flush();
    expect(started).toEqual([0, 1]);
    expect(lane.stats()).toEqual({
      global: { pending: 1, running: 1 },
      openai: { pending: 1, running: 1 },
    });
    for (const gate of gates) gate.resolve();
    await expect(Promise.all(results)).resolves.toEqual([0, 1, 2, 3]);
  });

  it('reports the wait and queue position when a task waited longer than warnAfterMs', async () => {
    const clock = createManualClock();
    const waits: LaneWaitInfo[] = [];
    const lane = createGlobalLane({
      concurrency: 1,
      warnAfterMs: 100,
      clock,
      onWaited: (info) => waits.push(info),
    });
    const { tasks, gates } = createGatedTasks(4);
    const results = tasks.map((task) => lane.run(task));

    clock.set(100);
    gates[0]?.resolve();
    await flush();
    expect(waits).toEqual([]);

    clock.set(250);
    gates[1]?.resolve();
    await flush();
    expect(waits).toEqual([{ lane: 'global', waitedMs: 250, position: 2 }]);

    clock.set(400);
    gates[2]?.resolve();
    gates[3]?.resolve();
    await Promise.all(results);
    expect(waits).toEqual([
      { lane: 'global', waitedMs: 250, position: 2 },
      { lane: 'global', waitedMs: 400, position: 3 },
    ]);
  });

  it('removes a waiting task and rejects with the reason when its signal aborts', async () => {
    const lane = createGlobalLane({ concurrency: 1, clock: createManualClock() });
    const gate = createDeferred<string>();
    const first = lane.run(() => gate.promise);
    const controller = new AbortController();
    const reason = new RuntimeError('cancelled', 'user sent /stop');
    const waitingTask = vi.fn(() => Promise.resolve('never'));
    const waiting = lane.run(waitingTask, { signal: controller.signal });
    expect(lane.stats().global).toEqual({ pending: 1, running: 1 });

    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(lane.stats().global).toEqual({ pending: 0, running: 1 });
    gate.resolve('first');
    await expect(first).resolves.toBe('first');
    expect(waitingTask).not.toHaveBeenCalled();

    await expect(lane.run(waitingTask, { signal: controller.signal })).rejects.toBe(reason);
    expect(waitingTask).not.toHaveBeenCalled();
  });

  it('keeps a running task in its slot when its signal aborts after it started', async () => {
    const lane = createGlobalLane({ concurrency: 1, clock: createManualClock() });
    const gate = createDeferred<string>();
    const controller = new AbortController();
    const running = lane.run(() => gate.promise, { signal: controller.signal });
    const next = lane.run(() => Promise.resolve('next'));
    await flush();
    controller.abort(new Error('late'));
    await flush();
    expect(lane.stats().global).toEqual({ pending: 1, running: 1 });
    gate.resolve('finished');
    await expect(running).resolves.toBe('finished');
    await expect(next).resolves.toBe('next');
  });

  it('rejects new runs with runtime_closed and finishes accepted ones when closed', async () => {
    const lane = createGlobalLane({ concurrency: 1, clock: createManualClock() });
    const gate = createDeferred<string>();
    const running = lane.run(() => gate.promise);
    const pendingTask = vi.fn(() => Promise.resolve('pending'));
    const pending = lane.run(pendingTask);

    let closed = false;
    const closing = lane.close().then(() => {
      closed = true;
    });
    expect(lane.closed).toBe(true);
    let refused: Promise<unknown> | undefined;
    expect(() => {
      refused = lane.run(() => Promise.resolve('late'));
    }).not.toThrow();
    await expect(refused).rejects.toSatisfy((error) => isRuntimeError(error, 'runtime_closed'));

    await flush();
    expect(closed).toBe(false);
    gate.resolve('running');
    await closing;
    await expect(running).resolves.toBe('running');
    await expect(pending).resolves.toBe('pending');
    expect(pendingTask).toHaveBeenCalledOnce();
  });

  it.each<[string, Partial<GlobalLaneOptions>]>([
    ['concurrency', { concurrency: 0 }],
    ['concurrency', { concurrency: 1.5 }],
    ['rate.limit', { rate: { limit: 0, intervalMs: 1000 } }],
    ['rate.intervalMs', { rate: { limit: 1, intervalMs: 0 } }],
    ['warnAfterMs', { warnAfterMs: -1 }],
    ['perProvider.openai.concurrency', { perProvider: { openai: { concurrency: 0 } } }],
    ['perProvider.openai.rate.limit', { perProvider: { openai: { rate: { limit: 0.5, intervalMs: 1 } } } }],
    ['perProvider.global', { perProvider: { global: {} } }],
  ])('throws invalid_input naming %s when it is out of range', (field, overrides) => {
    const create = () => createGlobalLane({ clock: createManualClock(), ...overrides });
    expect(create).toThrow(RuntimeError);
    try {
      create();
    } catch (error) {
      expect(isRuntimeError(error, 'invalid_input')).toBe(true);
      expect((error as RuntimeError).message).toContain(field);
    }
  });

  it('throws invalid_input when the clock is missing', () => {
    expect(() => createGlobalLane({} as GlobalLaneOptions)).toThrow(/clock/);
  });
});
