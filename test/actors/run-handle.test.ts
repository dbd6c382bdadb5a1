import { describe, expect, it, vi } from 'vitest';
import { activityOf, stopSession } from '../../src/actors/session-machine.js';
import { RuntimeError } from '../../src/core/errors.js';
import type { RunResult } from '../../src/runner/run-request.js';
import { admitMessage, bareSession, watchSteps } from '../support/session-actor.js';

/** A bare session actor with one run started, waiting until the test finishes it; `steps`: the actor's steps since. */
function sessionWithRun() {
  const { clock, runs, actor } = bareSession();
  actor.start();
  admitMessage(actor, 'm1');
  const run = runs[0];
  if (run === undefined) throw new Error('no run started');
  return { actor, clock, run, steps: watchSteps(actor) };
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
    const { actor, clock, run, steps } = sessionWithRun();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    stopSession(actor);
    expect(run.request.signal.aborted).toBe(true);
    expect(run.request.signal.reason).toBeInstanceOf(RuntimeError);
    expect((run.request.signal.reason as RuntimeError).message).toBe('session stopped');
    run.finish(summary);
    await clock.advance(0);
    expect(steps).toEqual([]);
    expect(actor.getSnapshot().context.lastEnd).toBeUndefined();
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });

  it('leaves a run that ended alone when the session actor is stopped afterwards', async () => {
    const { actor, clock, run } = sessionWithRun();
    run.finish(summary);
    await clock.advance(0);
    expect(actor.getSnapshot().context.lastEnd).toBe(summary);
    stopSession(actor);
    expect(run.request.signal.aborted).toBe(false);
  });

  it('hands a run end to the actor, which takes it in one step: idle, no run named, the end kept', async () => {
    const { clock, run, steps } = sessionWithRun();
    expect(steps).toEqual([]);
    run.finish(summary);
    await clock.advance(0);
    expect(steps).toEqual([{ value: { idle: 'empty' }, runNamed: false, lastEndStatus: 'completed' }]);
  });

  it('hands nothing to an actor that was stopped: it takes no step and still names the run', async () => {
    const { actor, clock, run, steps } = sessionWithRun();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    stopSession(actor);
    run.finish(summary);
    await clock.advance(0);
    expect(steps).toEqual([]);
    expect(actor.getSnapshot().context.run).not.toBeNull();
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });
});
