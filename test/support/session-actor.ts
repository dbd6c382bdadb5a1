import { fakeClock } from 'agentlanes/testing';
import {
  createSessionActor,
  createSessionMachine,
  type SessionActor,
  type SessionMachineDeps,
} from '../../src/actors/session-machine.js';
import { sequentialIds } from '../../src/core/ids.js';
import { defaultQueueSettings } from '../../src/policies/queue-settings.js';
import type { ExecutedRun, RunRequest, RunPort } from '../../src/runner/run-request.js';

/** A run the bare session started: the test finishes it (its end or pause, written or still to write) by hand. */
export interface StartedRun {
  readonly request: RunRequest;
  readonly port: RunPort;
  readonly finish: (result: ExecutedRun) => void;
}

/**
 * A bare session actor of session "chat:1" on a fake clock at 1000 (not started): its runs wait in `runs` until the
 * test finishes them, and its other dependencies do nothing unless `overrides` says otherwise.
 */
export function bareSession(overrides: Partial<SessionMachineDeps> = {}) {
  const clock = fakeClock({ now: 1000 });
  const runs: StartedRun[] = [];
  const machine = createSessionMachine({
    clock,
    ids: sequentialIds(),
    executeRun: (request, port) =>
      new Promise<ExecutedRun>((resolve) => runs.push({ request, port, finish: resolve })),
    portOf: (key) => ({ key, emit: () => undefined }),
    onIdle: () => undefined,
    pauseTimeoutMs: 60_000,
    endPlan: () => undefined,
    ...overrides,
  });
  const actor: SessionActor = createSessionActor(machine, { input: { sessionKey: 'chat:1' }, clock });
  return { clock, runs, actor };
}

/** Send the ADMIT of durable followup message `messageId` ("hi", recorded pending at 1000). */
export function admitMessage(actor: SessionActor, messageId: string): void {
  actor.send({
    type: 'ADMIT',
    item: { messageId, text: 'hi', mode: 'followup', enqueuedAt: 1000, debounceMs: 0, maxWaitMs: 0 },
    settings: defaultQueueSettings,
    recorded: 'pending',
    at: 1000,
    remember: false,
    waitMs: 0,
  });
}

/** What the actor took in: each step it took after `watchSteps` was called, as the place it went to and its run. */
export interface TakenStep {
  readonly value: unknown;
  readonly runNamed: boolean;
  readonly lastEndStatus?: string;
}

/** Record every step the actor takes from now on (a stopped actor takes none). */
export function watchSteps(actor: SessionActor, onStep?: (step: TakenStep) => void): TakenStep[] {
  const steps: TakenStep[] = [];
  actor.subscribe((snapshot) => {
    const status = snapshot.context.lastEnd?.status;
    const step = {
      value: snapshot.value,
      runNamed: snapshot.context.run !== null,
      ...(status === undefined ? {} : { lastEndStatus: status }),
    };
    steps.push(step);
    onStep?.(step);
  });
  return steps;
}
