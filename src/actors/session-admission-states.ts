import type { AdmitActivity } from './session-admission.js';

/**
 * ADMIT in an idle state: a message that starts a run goes straight to `running`; anything else re-checks the
 * queue (an interrupting message also ends a paused plan run the session holds).
 */
export function idleAdmission(activity: 'idle' | 'waiting' | 'held') {
  const admit = { type: 'admit', params: { activity, place: 'idle' } } as const;
  return {
    ADMIT: [
      {
        guard: { type: 'admits', params: { activity, kind: 'start' } },
        target: '#session.running',
        actions: admit,
      },
      {
        guard: { type: 'admits', params: { activity, kind: 'interrupt' } },
        target: '#session.idle.check',
        actions: [admit, { type: 'endPlans' }],
      },
      { target: '#session.idle.check', actions: admit },
    ],
  } as const;
}

/**
 * ADMIT while a run runs: a steer reaches the run, an interrupting message aborts it, the rest queues. The
 * activity is the run's phase, read off its handle when the guard runs (`run`).
 */
export function runningAdmission() {
  const activity = 'run';
  const admit = { type: 'admit', params: { activity, place: 'running' } } as const;
  return {
    ADMIT: [
      {
        guard: { type: 'admits', params: { activity, kind: 'steer' } },
        actions: [admit, { type: 'steerRun' }],
      },
      {
        guard: { type: 'admits', params: { activity, kind: 'interrupt' } },
        actions: [admit, { type: 'interruptRun' }],
      },
      { actions: admit },
    ],
  } as const;
}

/** ADMIT while the run is paused: an interrupting message ends the paused run (it runs first), the rest queues. */
export function pausedAdmission(activity: 'awaiting_approval' | 'awaiting_tool_results') {
  const admit = { type: 'admit', params: { activity, place: 'paused' } } as const;
  return {
    ADMIT: [
      {
        guard: { type: 'admits', params: { activity, kind: 'interrupt' } },
        target: '#session.running',
        actions: admit,
      },
      { actions: admit },
    ],
  } as const;
}

/** The decision kinds an ADMIT guard tells apart. */
export type AdmitKind = 'start' | 'steer' | 'enqueue' | 'interrupt';

/** Params of the `admits` guard and the `admit` action. */
export interface AdmitGuardParams {
  readonly activity: AdmitActivity;
  readonly kind: AdmitKind;
}
