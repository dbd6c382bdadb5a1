import { describe, expect, it, onTestFailed } from 'vitest';
import { freshSchema } from '../support/postgres.js';
import { clusterFixture, runsOf } from './cluster-fixture.js';

/** The workers' lease (worker-child.ts) and scan interval: a dead worker's sessions move within their sum. */
const leaseMs = 2_000;
const scanMs = 250;

describe('takeover in a cluster of worker processes', { timeout: 90_000 }, () => {
  it('moves a SIGKILLed worker’s sessions: its run resumed to its end, its queue run in order, its approval still pending', async () => {
    const fixture = clusterFixture(freshSchema());
    onTestFailed(() => console.log(fixture.log.join('')));
    const [a, b] = await Promise.all([fixture.start('a', { leaseMs }), fixture.start('b', { leaseMs })]);
    expect(await a.call('s1', 'send', { id: 'm1', text: 'hang' })).toMatchObject({ disposition: 'started' });
    expect(await a.call('s1', 'send', { id: 'm2', text: 'after one' })).toMatchObject({
      disposition: 'queued',
    });
    expect(await a.call('s1', 'send', { id: 'm3', text: 'after two' })).toMatchObject({
      disposition: 'queued',
    });
    expect(await a.call('s9', 'send', { id: 'r1', text: 'refund' })).toMatchObject({
      disposition: 'started',
    });
    const paused = await a.call<{ status: string; runId: string; waiting: { toolCallId: string }[] }>(
      's9',
      'waitForEnd',
      { timeoutMs: 10_000 },
    );
    expect(paused.status).toBe('paused');
    // Kill A once the pause is durable (a pause not yet written is a crash, as on one process).
    let pausedRuns = await a.call<{ status: string }[]>('s9', 'runs');
    while (pausedRuns[0]?.status !== 'awaiting_approval') pausedRuns = await a.call('s9', 'runs');

    const killedAt = Date.now();
    a.signal('SIGKILL');
    await a.exited;
    // B's calls wait through the takeover: forwarded to A until its lease ran out, then claimed by B.
    let result = await b.call<{ status: string }>('s1', 'waitForEnd', { timeoutMs: 20_000 });
    while (result.status !== 'idle') result = await b.call('s1', 'waitForEnd', { timeoutMs: 20_000 });
    const runs = await runsOf(fixture, 's1');
    expect(runs.map((run) => [run.status, run.message_ids])).toEqual([
      ['completed', ['m1']],
      ['completed', ['m2']],
      ['completed', ['m3']],
    ]);
    const [resumed] = await fixture.query<{ at: number; body: string }>(
      "SELECT at, body FROM events WHERE run_id = $1 AND type = 'run.resumed'",
      [runs[0]?.run_id],
    );
    expect(JSON.parse(resumed?.body ?? '{}')).toMatchObject({ attempt: 1, reason: 'takeover' });
    // The documented bound (docs/distributed.md): lease + scan, plus the adoption itself (generous on a busy CI).
    expect(Number(resumed?.at ?? Infinity) - killedAt).toBeLessThan(leaseMs + scanMs + 5_000);
    expect(fixture.calls.filter((call) => call.text.startsWith('after')).map((call) => call.worker)).toEqual([
      'b',
      'b',
    ]);

    // The paused run survived the takeover still waiting for its approval; approving it on B completes it.
    expect(await fixture.query('SELECT status FROM runs WHERE run_id = $1', [paused.runId])).toEqual([
      { status: 'awaiting_approval' },
    ]);
    await b.call('s9', 'approve', { toolCallId: paused.waiting[0]?.toolCallId, decision: 'approve' });
    expect(await b.call('s9', 'waitForEnd', { timeoutMs: 10_000 })).toMatchObject({
      status: 'ended',
      run: { runId: paused.runId, status: 'completed', text: 'refunded' },
    });
  });

  it('resumes a SIGKILLed worker’s plan run on the worker that takes its session over', async () => {
    const fixture = clusterFixture(freshSchema());
    onTestFailed(() => console.log(fixture.log.join('')));
    const [a, b] = await Promise.all([fixture.start('a', { leaseMs }), fixture.start('b', { leaseMs })]);
    // A's answer never comes: A dies while the step runs.
    a.call('p1', 'executePlan', { steps: [{ id: 's1', tool: 'hold', args: {} }] }).catch(() => undefined);
    await fixture.callSeen('a', 'step:hold', false);
    a.signal('SIGKILL');
    await a.exited;
    // B adopts the session once A's lease ran out (a call to it waits through the takeover) and runs the step again.
    await b.call('p1', 'status');
    await fixture.callSeen('b', 'step:hold', false);
    const runsOfPlan = () =>
      fixture.query<{ run_id: string; status: string }>(
        'SELECT run_id, status FROM runs WHERE session_key = $1',
        ['p1'],
      );
    let runs = await runsOfPlan();
    for (let polls = 0; runs[0]?.status === 'running' && polls < 200; polls++) {
      await b.call('p1', 'waitForEnd', { timeoutMs: 100 });
      runs = await runsOfPlan();
    }
    expect(runs.map((run) => run.status)).toEqual(['completed']);
    const resumed = await fixture.query<{ body: string }>(
      "SELECT body FROM events WHERE run_id = $1 AND type = 'run.resumed'",
      [runs[0]?.run_id],
    );
    expect(resumed.map((row) => JSON.parse(row.body) as unknown)).toMatchObject([{ reason: 'takeover' }]);
  });

  it('fences out a SIGSTOPped owner: after SIGCONT nothing it writes for the session lands', async () => {
    const fixture = clusterFixture(freshSchema());
    onTestFailed(() => console.log(fixture.log.join('')));
    const [a, b] = await Promise.all([fixture.start('a', { leaseMs }), fixture.start('b', { leaseMs })]);
    const started = await a.call<{ runId: string }>('s5', 'send', { id: 'm1', text: 'slow:3000' });
    // Stop A mid-stream: its run is open in the ledger and its model call under way.
    await fixture.callSeen('a', 'slow:3000', false);
    a.signal('SIGSTOP');
    // Forwarded to A until its lease ran out; then B claims s5, resumes A's run (its model call made again), then m2.
    const admitted = await b.call<{ disposition: string }>('s5', 'send', {
      id: 'm2',
      text: 'after the stall',
    });
    expect(['started', 'queued']).toContain(admitted.disposition);
    let settled = await b.call<{ status: string }>('s5', 'waitForEnd', { timeoutMs: 10_000 });
    while (settled.status !== 'idle') settled = await b.call('s5', 'waitForEnd', { timeoutMs: 10_000 });
    const before = await fixture.query<{ cursor: number }>('SELECT max(cursor) AS cursor FROM events');
    a.signal('SIGCONT');
    // A learns it lost its lease, then forwards its own caller's message to B.
    expect(await a.call('s5', 'send', { id: 'm3', text: 'from a' })).toMatchObject({ messageId: 'm3' });
    await fixture.callSeen('a', 'slow:3000', true);
    let result = await b.call<{ status: string }>('s5', 'waitForEnd', { timeoutMs: 10_000 });
    while (result.status !== 'idle') result = await b.call('s5', 'waitForEnd', { timeoutMs: 10_000 });

    expect((await runsOf(fixture, 's5')).map((run) => [run.status, run.message_ids])).toEqual([
      ['completed', ['m1']],
      ['completed', ['m2']],
      ['completed', ['m3']],
    ]);
    // Nothing of A's stalled run was written after the stall: no event, no turn.
    const late = await fixture.query('SELECT type FROM events WHERE run_id = $1 AND cursor > $2', [
      started.runId,
      before[0]?.cursor ?? 0,
    ]);
    expect(late).toEqual([]);
    const turns = await fixture.query('SELECT role FROM turns WHERE run_id = $1 AND role = $2', [
      started.runId,
      'assistant',
    ]);
    // One assistant turn: B's, from the resume; none of A's.
    expect(turns).toEqual([{ role: 'assistant' }]);
    expect(fixture.calls.filter((call) => call.text === 'from a').map((call) => call.worker)).toEqual(['b']);
  });
});
