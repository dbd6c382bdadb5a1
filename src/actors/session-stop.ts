import { abortRun } from './run-handle.js';
import type { SessionActor } from './session-machine.js';

/** Stop a session actor; a run still in flight is aborted first (the actor owns it, nothing else would end it). */
export function stopSession(actor: SessionActor): void {
  abortRun(actor.getSnapshot().context.run, 'aborted', 'session stopped');
  actor.stop();
}
