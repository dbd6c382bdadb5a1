import type { LiveSession, SessionRegistry } from './session-registry.js';
import { RuntimeError } from '../core/index.js';
import type { EventInput } from '../core/index.js';
import type { RunServices } from '../runner/index.js';
import type { RunWork } from '../runner/index.js';
import type { SessionTools } from './session-tools.js';
import type { AdmissionDeps } from './admit-message.js';
import type { EventBus } from '../events/index.js';
import type { SessionGate } from './session-gate.js';
import type { RecoveryPolicy } from '../runner/index.js';

/** What session handles share with their runtime: the run services, and the session side of the runtime. */
export interface RuntimeInternals {
  /** The one bag of services runs (and plan runs, undo, decisions) use. */
  readonly services: RunServices;
  readonly bus: EventBus;
  readonly registry: SessionRegistry;
  readonly withSession: SessionGate;
  readonly admission: AdmissionDeps;
  /** Resolves once startup recovery is done (crashed runs closed). */
  readonly ready: Promise<void>;
  /** Resolves when the runtime has closed (ends event streams). */
  readonly closed: Promise<void>;
  isClosed(): boolean;
  /** Whether an auth profile with this id is configured. */
  knowsProfile(profileId: string): boolean;
  /** Emit an event of the runtime's own (not a run's) on a live session. */
  emit(session: LiveSession, event: EventInput): void;
  readonly sessionTools: SessionTools;
  /** The plan runs and undos in progress (`abort()` and `close()` reach them). */
  readonly work: RunWork;
  /** What becomes of runs a crash or a dead worker left open. @default resume (`defaultRecoveryPolicy`) */
  readonly recovery?: RecoveryPolicy;
}

/** Throw `runtime_closed` once the runtime stopped taking work. */
export function assertOpen(internals: RuntimeInternals): void {
  if (internals.isClosed()) throw new RuntimeError('runtime_closed', 'the runtime is closed');
}
