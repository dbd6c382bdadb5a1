import { describe, expect, it, vi } from 'vitest';
import { activityOf, stopSession } from '../../src/actors/session-machine.js';
import { RuntimeError } from '../../src/core/errors.js';
import { isRunPaused, type RunResult } from '../../src/runner/run-request.js';
import { admitMessage, bareSession } from '../support/session-actor.js';

/** A bare session actor with one run started, waiting until the test finishes it. */
function sessionWithRun() {
  const ended: RunResult[] = [];
  // Each report, with whether the actor's snapshot still named a run when it came.
  const reports: { adopted: boolean; status?: string; runStillNamed: boolean }[] = [];
  const { clock, runs, actor } = bareSession({
    onRunReported: (_key, { result, adopted }) => {
      if (adopted && result !== undefined && !isRunPaused(result)) ended.push(result);
      const runStillNamed = actor.getSnapshot().context.run !== null;
      const status = result === undefined || isRunPaused(result) ? undefined : result.status;
      reports.push({ adopted, ...(status === undefined ? {} : { status }), runStillNamed });
    },
  });
  actor.start();
  admitMessage(actor, 'm1');
  const run = runs[0];
  if (run === undefined) throw new Error('no run started');
  return { actor, clock, run, ended, reports };
}

const summary: RunResult = {
  runId: 'run_1',
  status: 'completed',
  text: '',
  messageIds: ['m1'],
  startedAt: 1000,
  endedAt: 1000,
};

describe('the run handle of a session', () => {
  it('keeps the run phase as data without a machine transition when the run reports a phase', () => {
    const { actor, run } = sessionWithRun();
    const before = actor.getSnapshot();
    run.port.setPhase('streaming');
    expect(actor.getSnapshot()).toBe(before);
    expect(activityOf(actor.getSnapshot())).toBe('streaming');
    run.port.setPhase('settling');
    expect(activityOf(actor.getSnapshot())).toBe('settling');
  });

  it('keeps no run handle in the persisted snapshot when a run is in flight', () => {
    const { actor, run } = sessionWithRun();
    run.port.setPhase('tools');
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as Record<string, unknown>;
    expect(persisted['children']).toEqual({});
    expect(JSON.stringify(persisted)).not.toContain('tools');
  });

  it('aborts the run in flight when the session actor is stopped', async () => {
    const { actor, clock, run, ended } = sessionWithRun();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    stopSession(actor);
    expect(run.request.signal.aborted).toBe(true);
    expect(run.request.signal.reason).toBeInstanceOf(RuntimeError);
    expect((run.request.signal.reason as RuntimeError).message).toBe('session stopped');
    run.finish(summary);
    await clock.advance(0);
    expect(ended).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });

  it('leaves a run that ended alone when the session actor is stopped afterwards', async () => {
    const { actor, clock, run, ended } = sessionWithRun();
    run.finish(summary);
    await clock.advance(0);
    expect(ended).toEqual([summary]);
    stopSession(actor);
    expect(run.request.signal.aborted).toBe(false);
  });

  it('reports a run end once the actor took it in, so its events go out while the snapshot shows it ended', async () => {
    const { clock, run, reports } = sessionWithRun();
    expect(reports).toEqual([]);
    run.finish(summary);
    await clock.advance(0);
    expect(reports).toEqual([{ adopted: true, status: 'completed', runStillNamed: false }]);
  });

  it('reports a run end as not adopted when its actor was stopped, so its held events are released all the same', async () => {
    const { actor, clock, run, reports } = sessionWithRun();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    stopSession(actor);
    run.finish(summary);
    await clock.advance(0);
    expect(reports).toEqual([{ adopted: false, status: 'completed', runStillNamed: true }]);
    warn.mockRestore();
  });
});
