import type { LiveSession, SessionRegistry } from '../actors/session-registry.js';
import type { Clock } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';
import type { EventInput } from '../core/events.js';
import type { SessionLane } from '../lanes/session-lane.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { SessionTools } from './session-tools.js';
import type { IdGenerator, Random } from '../core/ids.js';
import type { ActivePlans } from './plan-run.js';
import type { AdmissionDeps } from './admit-message.js';
import type { EventBus } from './event-bus.js';
import type { SessionGate } from './session-gate.js';
import type { ActiveUndo } from './undo-run.js';

/** What session handles share with their runtime. */
export interface RuntimeInternals {
  readonly clock: Clock;
  readonly ledger: Ledger;
  readonly bus: EventBus;
  readonly registry: SessionRegistry;
  readonly withSession: SessionGate;
  readonly admission: AdmissionDeps;
  /** Resolves when the runtime has closed (ends event streams). */
  readonly closed: Promise<void>;
  isClosed(): boolean;
  /** Whether an auth profile with this id is configured. */
  knowsProfile(profileId: string): boolean;
  emit(session: LiveSession, event: EventInput): void;
  /** The tools a session's runs may call. */
  toolsFor(sessionKey: string): ToolRegistry;
  readonly sessionTools: SessionTools;
  /** Serialises a session's runs; undo runs in it too, so it never overlaps a run of its session. */
  readonly sessionLane: SessionLane;
  readonly ids: IdGenerator;
  readonly random: Random;
  /** Tool names or globs that need approval whatever their risk. */
  readonly alwaysApprove: readonly string[];
  /** Plan runs executing now, per session (abort reaches them). */
  readonly activePlans: ActivePlans;
  /** Undos running now: `close()` waits for them, then aborts them; `session.abort()` aborts its session's. */
  readonly activeUndos: Set<ActiveUndo>;
  /** Plan runs an `approvePlan` is resuming (a second approval of the same pause is refused). */
  readonly resumingPlans: Set<string>;
  /** Where background failures (a ledger write) are reported. */
  onError(error: unknown): void;
}

/** Throw `runtime_closed` once the runtime stopped taking work. */
export function assertOpen(internals: RuntimeInternals): void {
  if (internals.isClosed()) throw new RuntimeError('runtime_closed', 'the runtime is closed');
}
