import { beforeAll, describe, expect, it } from 'vitest';
import { freshSchema } from '../support/postgres.js';
import type { ModelCall, Worker } from './cluster-driver.js';
import { clusterFixture, runsOf } from './cluster-fixture.js';

// Three workers for the file, each with a global lane of 2: the cluster as a whole may run 2 model calls at once.
const fixture = clusterFixture(freshSchema(), { keep: true });
let workers: Worker[] = [];
beforeAll(async () => {
  workers = await Promise.all(['a', 'b', 'c'].map((name) => fixture.start(name, { concurrency: 2 })));
}, 120_000);

/** The most calls that overlapped in time (an end at the same ms as a start does not overlap it). */
function maxOverlap(calls: readonly ModelCall[]): number {
  const edges = calls.flatMap((call) => [
    { at: call.start, step: 1 },
    { at: call.end, step: -1 },
  ]);
  edges.sort((left, right) => left.at - right.at || left.step - right.step);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.step));
  return most;
}

/** Wait (through whichever worker) until the session has nothing left to run. */
async function settle(worker: Worker, sessionKey: string): Promise<void> {
  let result = await worker.call<{ status: string }>(sessionKey, 'waitForEnd', { timeoutMs: 20_000 });
  while (result.status !== 'idle')
    result = await worker.call(sessionKey, 'waitForEnd', { timeoutMs: 20_000 });
}

describe('the global lane of a cluster', { timeout: 120_000 }, () => {
  it('never runs more model calls at once across the workers than its concurrency', async () => {
    const sessions = Array.from({ length: 9 }, (_, index) => `lane-${index}`);
    // Each worker gets three sessions first, so each claims (and runs) its own.
    await Promise.all(
      sessions.map((key, index) =>
        (workers[index % 3] as Worker).call(key, 'send', { id: `${key}-m`, text: 'slow:400' }),
      ),
    );
    await Promise.all(sessions.map((key, index) => settle(workers[index % 3] as Worker, key)));
    const calls = fixture.calls.filter((call) => call.text === 'slow:400');
    expect(calls).toHaveLength(9);
    expect(new Set(calls.map((call) => call.worker)).size).toBe(3);
    expect(maxOverlap(calls)).toBeLessThanOrEqual(2);
  });
});

describe('a session fed through every worker', { timeout: 120_000 }, () => {
  it('runs its messages once each, in the order they were acknowledged', async () => {
    const ids = Array.from({ length: 9 }, (_, index) => `o-${index + 1}`);
    for (const [index, id] of ids.entries()) {
      const result = await (workers[index % 3] as Worker).call<{ disposition: string }>('order', 'send', {
        id,
        text: `order ${index + 1}`,
      });
      expect(['started', 'queued']).toContain(result.disposition);
    }
    await settle(workers[0] as Worker, 'order');
    const runs = await runsOf(fixture, 'order');
    expect(runs.every((run) => run.status === 'completed')).toBe(true);
    expect(runs.flatMap((run) => run.message_ids)).toEqual(ids);
    const calls = fixture.calls.filter((call) => call.text.startsWith('order '));
    expect(calls.map((call) => call.text)).toEqual(ids.map((_, index) => `order ${index + 1}`));
    expect(new Set(calls.map((call) => call.worker)).size).toBe(1);
  });
});
