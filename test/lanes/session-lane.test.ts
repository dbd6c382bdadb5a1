import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDeferred } from '../../src/core/deferred.js';
import type { Deferred } from '../../src/core/deferred.js';
import { isRuntimeError } from '../../src/core/errors.js';
import { createSessionLane } from '../../src/lanes/session-lane.js';

/** Let every queued microtask (and the ones they queue) run. */
async function flush(): Promise<void> {
  for (let turn = 0; turn < 10; turn += 1) await Promise.resolve();
}

/** Tracks how many tasks of each key run at once, and the highest that number reached. */
function createConcurrencyTracker() {
  const active = new Map<string, number>();
  const maximum = new Map<string, number>();
  return {
    enter(key: string): void {
      const now = (active.get(key) ?? 0) + 1;
      active.set(key, now);
      maximum.set(key, Math.max(maximum.get(key) ?? 0, now));
    },
    leave(key: string): void {
      active.set(key, (active.get(key) ?? 0) - 1);
    },
    maximum,
  };
}

describe('createSessionLane', () => {
  it('runs tasks in submission order per key when keys are interleaved', async () => {
    const lane = createSessionLane();
    const log: string[] = [];
    const gates = new Map<string, Deferred<void>>();
    const submit = (key: string, index: number) => {
      const name = `${key}${index}`;
      const gate = createDeferred<void>();
      gates.set(name, gate);
      return lane.run(key, async () => {
        log.push(`start ${name}`);
        await gate.promise;
        log.push(`finish ${name}`);
        return name;
      });
    };
    const results = [submit('a', 1), submit('b', 1), submit('a', 2), submit('b', 2), submit('a', 3)];
    await flush();
    expect(log).toEqual(['start a1', 'start b1']);

    gates.get('a1')?.resolve();
    await flush();
    expect(log).toEqual(['start a1', 'start b1', 'finish a1', 'start a2']);

    gates.get('a2')?.resolve();
    gates.get('b1')?.resolve();
    gates.get('a3')?.resolve();
    gates.get('b2')?.resolve();
    await expect(Promise.all(results)).resolves.toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    const order = (prefix: string) => log.filter((entry) => entry.includes(` ${prefix}`));
    expect(order('a')).toEqual(['start a1', 'finish a1', 'start a2', 'finish a2', 'start a3', 'finish a3']);
    expect(order('b')).toEqual(['start b1', 'finish b1', 'start b2', 'finish b2']);
  });

  it('never runs two tasks of one key at once when many are queued', async () => {
    const lane = createSessionLane();
    const tracker = createConcurrencyTracker();
    const gates = Array.from({ length: 5 }, () => createDeferred<void>());
    const results = gates.map((gate) =>
      lane.run('k', async () => {
        tracker.enter('k');
        await gate.promise;
        tracker.leave('k');
      }),
    );
    for (const gate of gates.toReversed()) {
      gate.resolve();
      await flush();
    }
    await Promise.all(results);
    expect(tracker.maximum.get('k')).toBe(1);
  });

  it('runs tasks of different keys concurrently when both are busy', async () => {
    const lane = createSessionLane();
    const started: string[] = [];
    const gate = createDeferred<void>();
    const first = lane.run('a', async () => {
      started.push('a');
      await gate.promise;
    });
    const second = lane.run('b', async () => {
      started.push('b');
      await gate.promise;
    });
    await flush();
    expect(started).toEqual(['a', 'b']);
    expect(lane.activeKeys).toBe(2);
    gate.resolve();
    await Promise.all([first, second]);
  });

  it('starts the task synchronously when its key is idle', async () => {
    const lane = createSessionLane();
    let started = false;
    const result = lane.run('k', () => {
      started = true;
      return Promise.resolve(1);
    });
    expect(started).toBe(true);
    await expect(result).resolves.toBe(1);
  });

  it('rejects only the failing caller and runs the next task when a task rejects', async () => {
    const lane = createSessionLane();
    const failing = lane.run('k', () => Promise.reject(new Error('boom')));
    const next = lane.run('k', () => Promise.resolve('next'));
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });

  it('turns a synchronous throw into a rejection when the key is idle or busy', async () => {
    const lane = createSessionLane();
    const gate = createDeferred<void>();
    const throwing = (): Promise<never> => {
      throw new Error('sync');
    };
    let idleResult: Promise<never> | undefined;
    expect(() => {
      idleResult = lane.run('idle', throwing);
    }).not.toThrow();
    await expect(idleResult).rejects.toThrow('sync');
    expect(lane.size('idle')).toBe(0);

    const first = lane.run('busy', () => gate.promise);
    const queued = lane.run('busy', throwing);
    const after = lane.run('busy', () => Promise.resolve('after'));
    gate.resolve();
    await first;
    await expect(queued).rejects.toThrow('sync');
    await expect(after).resolves.toBe('after');
    expect(lane.activeKeys).toBe(0);
  });

  it('rejects pending tasks with cancelled and keeps the active one when cleared', async () => {
    const lane = createSessionLane();
    const gate = createDeferred<string>();
    const started: string[] = [];
    const active = lane.run('k', () => {
      started.push('active');
      return gate.promise;
    });
    const pending = [1, 2].map((index) =>
      lane.run('k', () => {
        started.push(`pending ${index}`);
        return Promise.resolve(index);
      }),
    );
    expect(lane.size('k')).toBe(3);

    expect(lane.clear('k')).toBe(2);
    expect(lane.size('k')).toBe(1);
    for (const result of pending) {
      await expect(result).rejects.toSatisfy((error) => isRuntimeError(error, 'cancelled'));
    }
    const later = lane.run('k', () => Promise.resolve('later'));
    gate.resolve('done');
    await expect(active).resolves.toBe('done');
    await expect(later).resolves.toBe('later');
    expect(started).toEqual(['active']);
    expect(lane.clear('unknown')).toBe(0);
  });

  it('frees a key when its last task settles', async () => {
    const lane = createSessionLane();
    const gate = createDeferred<void>();
    const results = [
      lane.run('a', () => gate.promise),
      lane.run('a', () => Promise.reject(new Error('x'))),
      lane.run('b', () => gate.promise),
    ];
    expect(lane.activeKeys).toBe(2);
    expect(lane.size('a')).toBe(2);
    gate.resolve();
    await Promise.allSettled(results);
    expect(lane.activeKeys).toBe(0);
    expect(lane.size('a')).toBe(0);
    expect(lane.size('b')).toBe(0);
  });

  it('keeps per-key order, one active per key and settles everything when tasks are random', async () => {
    const taskArbitrary = fc.record({
      key: fc.constantFrom('a', 'b', 'c'),
      succeed: fc.boolean(),
      asynchronous: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(taskArbitrary, { maxLength: 40 }), async (tasks) => {
        const lane = createSessionLane();
        const tracker = createConcurrencyTracker();
        const startOrder = new Map<string, number[]>();
        const gates = tasks.map(() => createDeferred<void>());
        const results = tasks.map((spec, index) =>
          lane.run(spec.key, async () => {
            tracker.enter(spec.key);
            startOrder.set(spec.key, [...(startOrder.get(spec.key) ?? []), index]);
            if (spec.asynchronous) await gates[index]?.promise;
            tracker.leave(spec.key);
            if (!spec.succeed) throw new Error(`task ${index} failed`);
            return index;
          }),
        );
        // Release the gates in reverse order so later tasks are ready before earlier ones finish.
        for (const gate of gates.toReversed()) gate.resolve();
        const settled = await Promise.allSettled(results);

        settled.forEach((outcome, index) => {
          expect(outcome.status).toBe(tasks[index]?.succeed ? 'fulfilled' : 'rejected');
        });
        for (const key of ['a', 'b', 'c']) {
          const submitted = tasks.flatMap((spec, index) => (spec.key === key ? [index] : []));
          expect(startOrder.get(key) ?? []).toEqual(submitted);
          expect(tracker.maximum.get(key) ?? 0).toBeLessThanOrEqual(1);
        }
        expect(lane.activeKeys).toBe(0);
      }),
    );
  });
});
