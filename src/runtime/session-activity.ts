import type { SessionSnapshot } from '../actors/session-machine.js';
import type { SessionActivity } from '../policies/queue-admission.js';

/** The session states `status()` reports. */
export type SessionState =
  'idle' | 'running' | 'streaming' | 'compacting' | 'awaiting_approval' | 'awaiting_tool_results';

/** What the session is doing, read off the actor's snapshot. */
export function activityOf(snapshot: SessionSnapshot): SessionActivity {
  const value = snapshot.value;
  if (typeof value === 'string') return value;
  if ('idle' in value) return value.idle === 'waiting' ? 'waiting' : 'idle';
  return value.running;
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
