import type { SessionSnapshot } from './session-machine.js';
import { pausedPlanOf } from './session-plans.js';
import { phaseOf } from './run-handle.js';
import type { SessionActivity } from '../policies/index.js';

/** The session states `status()` reports. */
export type SessionState =
  'idle' | 'running' | 'streaming' | 'compacting' | 'awaiting_approval' | 'awaiting_tool_results';

/**
 * What the session is doing, read off the actor's snapshot. A plan run the session holds reads like an agent
 * run: paused for approval (`awaiting_approval`), else busy and not steerable (`settling`, shown as running).
 */
export function activityOf(snapshot: SessionSnapshot): SessionActivity {
  const value = snapshot.value;
  if (value === 'running') return phaseOf(snapshot.context.run);
  if (typeof value === 'string') return value;
  if (value.idle === 'held')
    return pausedPlanOf(snapshot.context) === undefined ? 'settling' : 'awaiting_approval';
  return value.idle === 'waiting' ? 'waiting' : 'idle';
}

/** The state `status()` reports for an activity. */
export function stateOf(activity: SessionActivity): SessionState {
  switch (activity) {
    case 'idle':
    case 'waiting':
      return 'idle';
    case 'streaming':
    case 'compacting':
    case 'awaiting_approval':
    case 'awaiting_tool_results':
      return activity;
    case 'starting':
    case 'tools':
    case 'settling':
      return 'running';
  }
}
