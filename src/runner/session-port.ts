import type { EventInput } from '../core/index.js';
import type { RunPhase } from './run-context.js';

/**
 * What a run needs of its live session, implemented above `runner/` (the runtime binds it to the session's
 * sequence counter): the run gets it once when it starts, so an event is not looked up per emit.
 */
export interface SessionPort {
  /** The session's key. */
  readonly key: string;
  /** Stamp, record and deliver one of the run's events on this session (its pause or end once adopted). */
  emit(event: EventInput): void;
  /** Resolves once every event emitted so far is recorded (a call's start is durable before it runs). */
  durable?(): Promise<void>;
}

/**
 * The one port of a run to its session, handed to `executeRun` with the request: its events, and where it stands
 * (the phase `status()` shows: streaming, tools, compacting, settling).
 */
export interface RunPort extends SessionPort {
  setPhase(phase: RunPhase): void;
}
