/**
 * `agentlanes/events`: the event union's schema and the closed unions its events carry, for code that validates
 * or enumerates events (a consumer of `/v1` streams, a log processor). `RuntimeEvent`, `EventOf`, `EventType` and
 * `parseRuntimeEvent` are on the root entry.
 */
export {
  runtimeEventSchema,
  eventTypes,
  runStatuses,
  pauseStates,
  type EventInput,
  type RunStatus,
  type PauseState,
} from '../core/index.js';
