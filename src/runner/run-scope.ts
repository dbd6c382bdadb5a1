import type { PauseDeps } from './run-pause.js';
import type { RunRequest } from './run-request.js';
import type { RunServices } from './run-services.js';
import type { RunPort } from './session-port.js';
import { createRunWrites, type RunWrites } from './run-writes.js';

/** One run being executed: the shared services, the request, and its session's port taken at the start. */
export interface RunScope {
  readonly services: RunServices;
  readonly request: RunRequest;
  readonly port: RunPort;
  /** What recording and resuming this run's pauses needs. */
  readonly pause: PauseDeps;
  /** The run's background writes (its turns), which its commit waits for. */
  readonly writes: RunWrites;
}

/** Open the scope of a run with the port its session handed it. */
export function openRunScope(services: RunServices, request: RunRequest, port: RunPort): RunScope {
  const pause: PauseDeps = {
    ledger: services.ledger,
    clock: services.clock,
    emit: (event) => port.emit(event),
    write: (promise) => {
      promise.catch(services.onError);
    },
    historyTurns: services.limits.historyTurns,
  };
  return { services, request, port, pause, writes: createRunWrites() };
}
