import {
  createIdleSweeper,
  type IdleSweeper,
  createSessionRegistry,
  type SessionRegistry,
} from './session-registry.js';
import { createSessionMachine } from './session-machine.js';
import { resolveQueueSettings, type QueueSettingsInput } from '../policies/index.js';
import { createRunExecutor, type RunServices } from '../runner/index.js';
import type { EventBus } from '../events/index.js';
import type { LateBound, Clock, IdGenerator } from '../core/index.js';
import { endPlanOf, type RuntimeInternals } from './runtime-internals.js';

/** The session side of a runtime: the registry of live sessions and the sweeper that hibernates idle ones. */
export interface OpenedSessions {
  readonly registry: SessionRegistry;
  readonly sweeper: IdleSweeper;
}

/** What opening the sessions needs besides the configuration and the run services. */
export interface SessionParts {
  readonly bus: EventBus;
  /** The runtime's internals, wired once the registry exists (the machine's callbacks read them later). */
  readonly internals: LateBound<RuntimeInternals>;
  readonly isClosing: () => boolean;
  readonly onCorrupt: (error: unknown) => void;
  /** Whether the model sees who said what: messages rebuilt from the inbox keep their sender line. */
  readonly attribution: boolean;
}

/** The part of the runtime's configuration the sessions read. */
export interface SessionsConfig {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly limits: { readonly pauseTimeoutMs: number };
  readonly sessions: { readonly hibernateAfterMs: number };
  readonly queue: QueueSettingsInput;
}

/** Create the idle sweeper, the session machine (executing runs with the run services) and the registry. */
export function openSessions(
  config: SessionsConfig,
  services: RunServices,
  parts: SessionParts,
): OpenedSessions {
  const { clock, limits } = config;
  const { bus, internals } = parts;
  const sweeper = createIdleSweeper({
    clock,
    idleMs: config.sessions.hibernateAfterMs,
    onDue: (sessionKey) => {
      // A plan run keeps its session live: its events go to this session's numbering.
      if (parts.isClosing() || internals.get().work.plans.has(sessionKey)) return;
      internals.get().registry.hibernate(sessionKey).catch(services.onError);
    },
  });
  const machine = createSessionMachine({
    clock,
    ids: config.ids,
    executeRun: createRunExecutor(services, (request) =>
      request.run.job === undefined
        ? undefined
        : internals.get().work.jobs.take(request.run.job, request.sessionKey, request.run.runId),
    ),
    portOf: (sessionKey) => services.sessionPort(sessionKey),
    onIdle: (sessionKey) => sweeper.markIdle(sessionKey),
    // The machine took the run's end or pause in (or is gone): the events announcing it go out now.
    onRunReported: (sessionKey) => bus.adopted(sessionKey),
    pauseTimeoutMs: limits.pauseTimeoutMs,
    endPlan: (sessionKey, runId, status, reason) => {
      endPlanOf(internals.get(), { sessionKey, runId, status, reason }).catch(services.onError);
    },
  });
  const queueDefaults = resolveQueueSettings({ runtime: config.queue });
  const registry = createSessionRegistry({
    machine,
    ledger: services.ledger,
    clock,
    defaults: {
      debounceMs: queueDefaults.debounceMs,
      maxWaitMs: queueDefaults.maxWaitMs,
      pauseTimeoutMs: limits.pauseTimeoutMs,
      attribution: parts.attribution,
    },
    onCorrupt: parts.onCorrupt,
  });
  return { registry, sweeper };
}
