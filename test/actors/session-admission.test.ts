import { fakeClock } from 'agentlanes/testing';
import { describe, expect, it } from 'vitest';
import {
  activityOf,
  createSessionActor,
  createSessionMachine,
  type SessionActor,
} from '../../src/actors/session-machine.js';
import {
  admitInto,
  previewAdmission,
  statusOf,
  type AdmitEvent,
} from '../../src/actors/session-admission.js';
import type { QueuedMessage } from '../../src/actors/session-context.js';
import { sequentialIds } from '../../src/core/ids.js';
import { queueModes } from '../../src/core/queue-modes.js';
import { defaultQueueSettings, type QueueSettings } from '../../src/policies/queue-settings.js';
import type { RunRequest, RunPort, RunResult } from '../../src/runner/run-request.js';

interface Started {
  readonly request: RunRequest;
  readonly port: RunPort;
  readonly finish: (result: RunResult) => void;
}

/** A bare session actor whose runs wait until the test finishes them. */
function session() {
  const clock = fakeClock({ now: 1000 });
  const runs: Started[] = [];
  const endedPlans: { runId: string; status: string }[] = [];
  const machine = createSessionMachine({
    clock,
    ids: sequentialIds(),
    executeRun: (request, port) =>
      new Promise<RunResult>((resolve) => {
        runs.push({ request, port, finish: resolve });
      }),
    portOf: (key) => ({ key, emit: () => undefined }),
    onIdle: () => undefined,
    pauseTimeoutMs: 60_000,
    endPlan: (_key, runId, status) => endedPlans.push({ runId, status }),
  });
  const actor: SessionActor = createSessionActor(machine, { input: { sessionKey: 'chat:1' }, clock });
  actor.start();
  return { actor, clock, runs, endedPlans };
}

function item(messageId: string, mode: QueuedMessage['mode'] = 'followup'): QueuedMessage {
  return {
    messageId,
    text: `text of ${messageId}`,
    mode,
    enqueuedAt: 1000,
    debounceMs: 1000,
    maxWaitMs: 5000,
  };
}

/** The machine's preliminary decision on a message not written yet (the preview `send()` takes). */
function admissionFor(actor: SessionActor, settings: QueueSettings, messageId = 'preview') {
  const { recorded: _durable, ...preview } = admitEvent(messageId, settings);
  return previewAdmission(actor, preview);
}

/** The ADMIT of message `messageId` with `settings` (recorded pending unless told otherwise). */
function admitEvent(messageId: string, settings: QueueSettings): AdmitEvent {
  const mode =
    settings.mode === 'collect' ? 'collect' : settings.mode === 'interrupt' ? 'interrupt' : 'followup';
  return {
    type: 'ADMIT',
    item: item(messageId, mode),
    settings,
    recorded: 'pending',
    at: 1000,
    remember: false,
    waitMs: 30_000,
  };
}

/** Send ADMIT the way `send()` does: the record's status comes from the preliminary decision. */
function admit(actor: SessionActor, messageId: string, settings: Partial<QueueSettings> = {}) {
  const resolved: QueueSettings = { ...defaultQueueSettings, ...settings };
  const preliminary = admissionFor(actor, resolved, messageId);
  return admitInto(actor, { ...admitEvent(messageId, resolved), recorded: statusOf(preliminary) });
}

/** A session whose first run is streaming. */
function streaming() {
  const live = session();
  admit(live.actor, 'm1');
  live.runs[0]?.port.setPhase('streaming');
  return live;
}

/** A session whose run paused for approval of one call. */
async function pausedForApproval() {
  const live = streaming();
  const call = { toolCallId: 'c1', tool: 'deploy', needs: 'approval' as const, turn: 1, position: 0 };
  live.runs[0]?.finish({ runId: 'run_1', state: 'awaiting_approval', calls: [call], at: 1000 });
  await live.clock.advance(0);
  return live;
}

describe('session admission', () => {
  it('starts a run when the session is idle, whatever the mode', () => {
    for (const mode of ['steer', 'followup', 'collect', 'interrupt', 'reject'] as const) {
      const { actor } = session();
      expect(admit(actor, 'm1', { mode })).toEqual({
        messageId: 'm1',
        kind: 'start',
        disposition: 'started',
        runId: 'run_1',
      });
      expect(actor.getSnapshot().value).toBe('running');
      expect(activityOf(actor.getSnapshot())).toBe('starting');
    }
  });

  it('steers a message into the run when the run is streaming', () => {
    const { actor, runs } = streaming();
    expect(admit(actor, 'm2', { mode: 'steer' })).toEqual({
      messageId: 'm2',
      kind: 'steer',
      disposition: 'steered',
      runId: 'run_1',
    });
    expect(actor.getSnapshot().context.queue).toEqual([]);
    expect(runs[0]?.request.steering.take()).toEqual([{ messageId: 'm2', text: 'text of m2' }]);
  });

  it('queues a steer message as a followup when the run is settling', () => {
    const { actor, runs } = streaming();
    runs[0]?.port.setPhase('settling');
    expect(admit(actor, 'm2', { mode: 'steer' })).toEqual({
      messageId: 'm2',
      kind: 'enqueue',
      disposition: 'queued',
      position: 1,
    });
    expect(runs[0]?.request.steering.pending).toBe(0);
  });

  it('steers and also queues a steer-backlog message when the run is streaming', () => {
    const { actor, runs } = streaming();
    const admitted = admit(actor, 'm2', { mode: 'steer-backlog' });
    expect(admitted).toEqual({
      messageId: 'm2',
      kind: 'steer',
      disposition: 'steered',
      position: 1,
      runId: 'run_1',
    });
    expect(actor.getSnapshot().context.queue.map((queued) => queued.mode)).toEqual(['followup']);
    expect(runs[0]?.request.steering.pending).toBe(1);
  });

  it('queues a followup and collects a collect message when a run is active', () => {
    const { actor } = streaming();
    expect(admit(actor, 'm2', { mode: 'followup' })).toMatchObject({
      kind: 'enqueue',
      disposition: 'queued',
      position: 1,
    });
    expect(admit(actor, 'm3', { mode: 'collect' })).toMatchObject({
      kind: 'enqueue',
      disposition: 'collected',
      position: 2,
    });
  });

  it('aborts the run and puts the message first when an interrupting message arrives while streaming', () => {
    const { actor, runs } = streaming();
    admit(actor, 'm2', { mode: 'followup' });
    expect(admit(actor, 'm3', { mode: 'interrupt' })).toEqual({
      messageId: 'm3',
      kind: 'interrupt',
      disposition: 'interrupted',
      position: 1,
    });
    expect(runs[0]?.request.signal.aborted).toBe(true);
    expect(actor.getSnapshot().context.interruptUntil).toBe(31_000);
  });

  it('queues a durable reject-mode message the preliminary decision refuses when a run is active', () => {
    const { actor } = streaming();
    const settings = { ...defaultQueueSettings, mode: 'reject' as const };
    expect(admissionFor(actor, settings)).toEqual({ kind: 'reject', code: 'rejected_busy' });
    const admitted = admitInto(actor, {
      type: 'ADMIT',
      item: item('m2'),
      settings,
      recorded: 'pending',
      at: 1000,
      remember: false,
      waitMs: 0,
    });
    expect(admitted).toMatchObject({
      kind: 'enqueue',
      disposition: 'queued',
      position: 1,
    });
  });

  it('queues a steer message recorded pending instead of only steering it when the run is streaming', () => {
    const { actor, runs } = streaming();
    const settings = { ...defaultQueueSettings, mode: 'steer' as const };
    const admitted = admitInto(actor, {
      type: 'ADMIT',
      item: item('m2'),
      settings,
      recorded: 'pending',
      at: 1000,
      remember: false,
      waitMs: 0,
    });
    expect(admitted).toMatchObject({
      kind: 'enqueue',
      disposition: 'queued',
      position: 1,
    });
    expect(runs[0]?.request.steering.pending).toBe(0);
  });

  it('drops the oldest queued message when the queue is full and the cap drops old ones', () => {
    const { actor } = streaming();
    admit(actor, 'm2', { mode: 'followup', cap: 2, drop: 'old' });
    admit(actor, 'm3', { mode: 'followup', cap: 2, drop: 'old' });
    const admitted = admit(actor, 'm4', { mode: 'followup', cap: 2, drop: 'old' });
    expect(admitted).toMatchObject({
      disposition: 'queued',
      position: 2,
      dropped: { messageId: 'm2', summary: null },
    });
    expect(actor.getSnapshot().context.queue.map((queued) => queued.messageId)).toEqual(['m3', 'm4']);
  });

  it('keeps a summary of the dropped message when the cap summarizes', () => {
    const { actor } = streaming();
    admit(actor, 'm2', { mode: 'collect', cap: 1, drop: 'summarize' });
    const admitted = admit(actor, 'm3', { mode: 'collect', cap: 1, drop: 'summarize' });
    expect(admitted?.dropped).toEqual({ messageId: 'm2', summary: 'text of m2' });
    expect(actor.getSnapshot().context.dropped).toEqual(['text of m2']);
  });

  it('starts an interrupting message at once when the idle session waits to drain its queue', async () => {
    const { actor, clock, runs } = streaming();
    admit(actor, 'm2', { mode: 'followup' });
    runs[0]?.finish({
      runId: 'run_1',
      status: 'completed',
      text: '',
      messageIds: ['m1'],
      startedAt: 1000,
      endedAt: 1000,
    });
    await clock.advance(0);
    expect(actor.getSnapshot().value).toEqual({ idle: 'waiting' });
    expect(admit(actor, 'm3', { mode: 'interrupt' })).toEqual({
      messageId: 'm3',
      kind: 'interrupt',
      disposition: 'started',
      runId: 'run_2',
    });
    expect(actor.getSnapshot().context.queue.map((queued) => queued.messageId)).toEqual(['m2']);
  });

  it('queues a steer message and ends the paused run for an interrupting one when the run awaits approval', async () => {
    const { actor, clock, runs } = await pausedForApproval();
    expect(actor.getSnapshot().value).toBe('awaiting_approval');
    expect(admit(actor, 'm2', { mode: 'steer' })).toMatchObject({
      kind: 'enqueue',
      disposition: 'queued',
      position: 1,
    });
    expect(admit(actor, 'm3', { mode: 'interrupt' })).toMatchObject({
      kind: 'interrupt',
      disposition: 'interrupted',
      position: 1,
    });
    await clock.advance(0);
    expect(runs[1]?.request.run.resume?.abort?.status).toBe('interrupted');
  });

  it('ends a paused plan run for an interrupting message when a plan holds the session', () => {
    const { actor, endedPlans } = session();
    actor.send({ type: 'PLAN.HELD', runId: 'plan_1' });
    expect(admit(actor, 'm1', { mode: 'steer' })).toMatchObject({
      kind: 'enqueue',
      disposition: 'queued',
      position: 1,
    });
    actor.send({ type: 'PLAN.PAUSED', runId: 'plan_1', steps: [{ stepId: 's1', tool: 'deploy' }], at: 1000 });
    expect(admit(actor, 'm2', { mode: 'interrupt' })).toMatchObject({
      kind: 'interrupt',
      disposition: 'interrupted',
      position: 1,
    });
    expect(endedPlans).toEqual([{ runId: 'plan_1', status: 'interrupted' }]);
  });

  it('decides as the preliminary decision does in every mode when a run streams', () => {
    for (const mode of queueModes.filter((each) => each !== 'queue' && each !== 'reject')) {
      const { actor } = streaming();
      const expected = admissionFor(actor, { ...defaultQueueSettings, mode });
      expect(admit(actor, 'm2', { mode })?.kind).toBe(expected.kind);
    }
  });
});
