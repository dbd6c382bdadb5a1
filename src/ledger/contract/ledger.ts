import type { CompensationStore } from './compensation-store.js';
import type { ConsumerStore } from './consumer-store.js';
import type { DeliveryStore } from './delivery-store.js';
import type { EventStore } from './event-store.js';
import type { InboxStore } from './inbox-store.js';
import type { PlanStore } from './plan-store.js';
import type { ProfileStore } from './profile-store.js';
import type { RecoveryStore } from './recovery-store.js';
import type { RunStore } from './run-store.js';
import type { SessionStore } from './session-store.js';
import type { ToolCallStore } from './tool-call-store.js';
import type { TranscriptStore } from './transcript-store.js';

/**
 * Where the runtime records everything: the stores of each concern, together. Async so that SQLite (group commit)
 * and Postgres can implement it. A write resolves once it is durable; a read reflects every write that was called
 * before it, whichever store it went to. Implementations store copies: a record passed in may not be changed by the
 * caller afterwards, and records handed out are the ledger's to keep (callers must not mutate them).
 */
export interface Ledger
  extends
    SessionStore,
    InboxStore,
    RunStore,
    TranscriptStore,
    ToolCallStore,
    CompensationStore,
    PlanStore,
    EventStore,
    ConsumerStore,
    DeliveryStore,
    ProfileStore,
    RecoveryStore {
  /**
   * True when a write is complete once its method returns (nothing is committed later, as in the memory ledger):
   * the event bus then delivers an event in the stretch that emitted it. @default false
   */
  readonly writesAreImmediate?: boolean;
  /**
   * True when a write never becomes durable before a write called earlier on this ledger: both commit in one
   * transaction, or the earlier one in an earlier transaction (or it failed, and its caller hears so). A new run
   * then calls its model without waiting for its opening to commit: everything the run makes observable (its
   * events, its turns, its end) commits with the opening or after it, and its tools wait for it. @default false
   */
  readonly writesCommitInOrder?: boolean;
  /**
   * Whether a run's close called now with `{ after: writes }` commits only if each of `writes` (promises this
   * ledger's writes returned) does: none failed yet, and the ledger settles them first (in the close's transaction,
   * which fails whole on a storage fault, or in one before it) and fails the close, unwritten, when one of them
   * failed. The close then goes in at once, in its turns' transaction, instead of one COMMIT after them. False when
   * one failed or is not known here. @default absent: the caller waits for them first
   */
  closesWith?(writes: readonly Promise<void>[]): boolean;
  /** Commit what is pending and release the ledger; every method rejects with `runtime_closed` afterwards. */
  close(): Promise<void>;
}
