import { describe, expect, it } from 'vitest';
import { recordOf, settingsOf, snapshotWithSettings } from '../../src/actors/session-context.js';
import type { RunResult, RunSummary } from '../../src/runner/run-request.js';
import { admitMessage, bareSession } from '../support/session-actor.js';

/** A bare session actor; `admit` starts a run the test finishes, `settled` collects what the actor emits. */
function session() {
  const { clock, runs, actor } = bareSession();
  const settled: RunResult[] = [];
  actor.on('run.settled', ({ result }) => settled.push(result));
  actor.start();
  const admit = (messageId: string) => admitMessage(actor, messageId);
  return { actor, clock, runs, settled, admit };
}

const summaryOf = (runId: string, messageId: string): RunSummary => ({
  runId,
  status: 'failed',
  text: '',
  messageIds: [messageId],
  startedAt: 1000,
  endedAt: 1000,
});

describe('the session machine context', () => {
  // Whether a waitForEnd() saw the end is kept outside the machine (test/runtime/wait-after-send.test.ts).
  it('emits run.settled and keeps the end as the last end in its context when a run ends', async () => {
    const { actor, clock, runs, settled, admit } = session();
    admit('m1');
    const run = runs[0];
    if (run === undefined) throw new Error('no run started');
    const summary = summaryOf(run.request.run.runId, 'm1');
    run.finish(summary);
    await clock.advance(0);
    expect(settled).toEqual([summary]);
    expect(actor.getSnapshot().context.lastEnd).toBe(summary);
  });

  it('emits run.settled for a plan run that pauses, leaving the last end alone', () => {
    const { actor, settled } = session();
    actor.send({ type: 'PLAN.HELD', runId: 'run_plan' });
    actor.send({
      type: 'PLAN.PAUSED',
      runId: 'run_plan',
      steps: [{ stepId: 's1', tool: 'refund' }],
      at: 1000,
    });
    expect(settled).toMatchObject([{ runId: 'run_plan', state: 'awaiting_approval' }]);
    expect(actor.getSnapshot().context.lastEnd).toBeUndefined();
  });

  it('holds the override and the tool layer in its context when CONFIGURE and CONFIGURE_TOOLS arrive', () => {
    const { actor } = session();
    actor.send({ type: 'CONFIGURE', override: { mode: 'collect' } });
    actor.send({ type: 'CONFIGURE', override: { debounceMs: 5 } });
    actor.send({ type: 'CONFIGURE_TOOLS', layer: { deny: ['exec'] } });
    expect(actor.getSnapshot().context).toMatchObject({
      override: { mode: 'collect', debounceMs: 5 },
      toolPolicy: { deny: ['exec'] },
    });
    actor.send({ type: 'CONFIGURE_TOOLS', layer: undefined });
    expect(actor.getSnapshot().context.toolPolicy).toBeUndefined();
  });
});

describe('the session record', () => {
  it('stores the settings in the row columns, not in the snapshot, and puts them back on hydrate', () => {
    const { actor } = session();
    actor.send({ type: 'CONFIGURE', override: { mode: 'collect' } });
    actor.send({ type: 'CONFIGURE_TOOLS', layer: { deny: ['exec'] } });
    const record = recordOf({ key: 'chat:1', actor, epoch: 1, lastSeq: 3 }, 2000);
    expect(record).toMatchObject({ override: { mode: 'collect' }, toolPolicy: { deny: ['exec'] } });
    const saved = record.snapshot as { context: Record<string, unknown> };
    expect(saved.context).not.toHaveProperty('override');
    expect(saved.context).not.toHaveProperty('toolPolicy');
    const restored = snapshotWithSettings(record.snapshot as never, settingsOf(record)) as unknown as {
      context: Record<string, unknown>;
    };
    expect(restored.context).toMatchObject({ override: { mode: 'collect' }, toolPolicy: { deny: ['exec'] } });
  });
});
