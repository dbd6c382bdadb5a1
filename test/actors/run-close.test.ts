import { describe, expect, it } from 'vitest';
import { createDeferred } from '../../src/core/deferred.js';
import { writeOf } from '../../src/actors/session-runs.js';
import type { RunEnding, RunPausing, RunSummary } from '../../src/runner/run-request.js';
import { admitMessage, bareSession, watchSteps } from '../support/session-actor.js';

const summary: RunSummary = {
  runId: 'run_1',
  status: 'completed',
  text: 'hi',
  messageIds: ['m1'],
  startedAt: 1000,
  endedAt: 1000,
};

/** A bare session actor with one run started; `steps` records the close and the machine's steps, in order. */
function sessionWithRun() {
  const steps: string[] = [];
  const { clock, runs, actor } = bareSession();
  actor.start();
  admitMessage(actor, 'm1');
  const run = runs[0];
  if (run === undefined) throw new Error('no run started');
  watchSteps(actor, ({ value }) => steps.push(`adopted, machine at ${JSON.stringify(value)}`));
  return { actor, clock, run, steps };
}

describe('the closing write of a run', () => {
  it('is made by the run handle in the stretch that reports the end, and waitForEnd reads what it left', async () => {
    const { actor, clock, run, steps } = sessionWithRun();
    const committed = createDeferred<RunSummary>();
    const ending: RunEnding = {
      summary,
      close: () => {
        steps.push(`close, machine at ${JSON.stringify(actor.getSnapshot().value)}`);
        return committed.promise;
      },
    };
    run.finish(ending);
    await clock.advance(0);
    expect(steps).toEqual(['close, machine at "running"', 'adopted, machine at {"idle":"empty"}']);
    expect(actor.getSnapshot().context.lastEnd).toBe(summary);
    const write = writeOf(summary);
    expect(write).toBeDefined();
    committed.resolve(summary);
    expect(await write).toBe(summary);
  });

  it('corrects the end the machine adopted with the one a failed commit was rewritten as', async () => {
    const { actor, clock, run } = sessionWithRun();
    const rewritten: RunSummary = {
      ...summary,
      status: 'failed',
      error: { code: 'ledger_unavailable', message: 'the run could not be committed: disk full' },
    };
    const corrections: ((summary: RunSummary) => void)[] = [];
    const ending: RunEnding = {
      summary,
      close: (corrected) => {
        corrections.push(corrected);
        return Promise.resolve(rewritten);
      },
    };
    run.finish(ending);
    await clock.advance(0);
    expect(actor.getSnapshot().context.lastEnd).toBe(summary);
    corrections[0]?.(rewritten);
    expect(actor.getSnapshot().context.lastEnd).toBe(rewritten);
  });

  it('records a pause in the stretch that reports it, before the machine adopts it', async () => {
    const { actor, clock, run, steps } = sessionWithRun();
    const pausing: RunPausing = {
      paused: {
        runId: 'run_1',
        state: 'awaiting_approval',
        calls: [{ toolCallId: 'call-1', tool: 'refund', needs: 'approval', turn: 0, position: 0 }],
        at: 1000,
      },
      record: () => {
        steps.push(`record, machine at ${JSON.stringify(actor.getSnapshot().value)}`);
        return Promise.resolve();
      },
    };
    run.finish(pausing);
    await clock.advance(0);
    expect(steps).toEqual(['record, machine at "running"', 'adopted, machine at "awaiting_approval"']);
    expect(actor.getSnapshot().value).toBe('awaiting_approval');
  });
});
