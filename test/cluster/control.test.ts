import { beforeAll, describe, expect, it } from 'vitest';
import { freshSchema } from '../support/postgres.js';
import type { Worker } from './cluster-driver.js';
import { clusterFixture, runsOf } from './cluster-fixture.js';

// Two workers for the whole file (starting a process costs seconds); each test has its own sessions. Nothing here
// is about takeover, so the leases are long: a worker starved of CPU on a loaded machine keeps its sessions.
const fixture = clusterFixture(freshSchema(), { keep: true });
let a: Worker;
let b: Worker;
beforeAll(async () => {
  const leaseMs = 10_000;
  [a, b] = await Promise.all([fixture.start('a', { leaseMs }), fixture.start('b', { leaseMs })]);
}, 120_000);

/** The workers that made model calls whose last user message is one of `texts` (unique to a test). */
function callersOf(...texts: string[]): Set<string> {
  return new Set(fixture.calls.filter((call) => texts.includes(call.text)).map((call) => call.worker));
}

describe('a cluster of worker processes on one Postgres schema', { timeout: 60_000 }, () => {
  it('runs a session on the worker that claimed it and forwards send and abort from another worker', async () => {
    expect(await a.call('s1', 'send', { id: 'm1', text: 'hang' })).toMatchObject({ disposition: 'started' });
    // B does not hold s1: its send is admitted by A, queued behind A's running run.
    expect(await b.call('s1', 'send', { id: 'm2', text: 'second' })).toMatchObject({
      messageId: 'm2',
      disposition: 'queued',
      position: 1,
    });
    expect(await b.call('s1', 'abort', { reason: 'stop' })).toBe(true);
    let result = await b.call<{ status: string; run?: { status: string } }>('s1', 'waitForEnd', {
      timeoutMs: 10_000,
    });
    while (result.status !== 'idle') result = await b.call('s1', 'waitForEnd', { timeoutMs: 10_000 });
    expect((await runsOf(fixture, 's1')).map((run) => [run.status, run.message_ids])).toEqual([
      ['aborted', ['m1']],
      ['completed', ['m2']],
    ]);
    expect(callersOf('hang', 'second')).toEqual(new Set(['a']));
    // A redelivered message is recognised by the owner, whichever worker it arrives on.
    expect(await b.call('s1', 'send', { id: 'm2', text: 'second' })).toMatchObject({
      disposition: 'duplicate',
    });
  });

  it('steers the owner’s running run from another worker', async () => {
    expect(await a.call('s2', 'send', { id: 'm1', text: 'slow:2000' })).toMatchObject({
      disposition: 'started',
    });
    // Steer once the owner's model call is under way: a steer that lands before the first call is folded into
    // that call instead (a forwarded steer can be that fast), which is another behaviour than the one pinned here.
    await fixture.callSeen('a', 'slow:2000', false);
    expect(await b.call('s2', 'steer', { id: 'm2', text: 'use metric units' })).toMatchObject({
      messageId: 'm2',
      disposition: 'steered',
    });
    // The steering text reached the model within the owner's run.
    expect(await b.call('s2', 'waitForEnd', { timeoutMs: 10_000 })).toMatchObject({
      status: 'ended',
      run: {
        status: 'completed',
        messageIds: ['m1'],
        text: 'one two three four five\n\necho use metric units',
      },
    });
    expect(callersOf('slow:2000', 'use metric units')).toEqual(new Set(['a']));
  });

  it('approves a paused call from another worker, and the owner’s run completes', async () => {
    expect(await a.call('s3', 'send', { id: 'm1', text: 'refund' })).toMatchObject({
      disposition: 'started',
    });
    const paused = await b.call<{ status: string; waiting: { toolCallId: string; needs: string }[] }>(
      's3',
      'waitForEnd',
      { timeoutMs: 10_000 },
    );
    expect(paused).toMatchObject({ status: 'paused', waiting: [{ needs: 'approval' }] });
    await b.call('s3', 'approve', { toolCallId: paused.waiting[0]?.toolCallId, decision: 'approve' });
    expect(await b.call('s3', 'waitForEnd', { timeoutMs: 10_000 })).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'refunded' },
    });
    expect(callersOf('refund')).toEqual(new Set(['a']));
  });

  it('answers a bad call on a non-owner with the owner’s invalid_input', async () => {
    await a.call('s4', 'send', { id: 'm1', text: 'hello' });
    await expect(b.call('s4', 'approve', { toolCallId: 'nope', decision: 'approve' })).rejects.toMatchObject({
      code: expect.stringMatching(/invalid_input|not_found/u) as unknown,
    });
  });
});
