export type { Ledger } from './ledger.js';
export type { SessionRecord, SessionStore } from './session-store.js';
export {
  inboxStatuses,
  type InboxStatus,
  type InboxRecord,
  type InboxUpdate,
  type InboxStore,
} from './inbox-store.js';
export {
  pausedRunStatuses,
  type PausedRunStatus,
  type OpenRunStatus,
  type RunRecord,
  type RunClose,
  type RunProgress,
  type RunStore,
} from './run-store.js';
export type { TurnRecord, TranscriptFork, TranscriptStore } from './transcript-store.js';
export {
  toolCallKinds,
  toolCallStatuses,
  type ToolCallKind,
  type ToolCallStatus,
  type ApprovalDecision,
  type ToolCallResult,
  type ToolCallRecord,
  type ToolCallUpdate,
  type ToolCallKey,
  type RememberedTools,
  type ToolCallStore,
} from './tool-call-store.js';
export {
  compensationStatuses,
  type CompensationStatus,
  type CompensationRecord,
  type CompensationUpdate,
  type CompensationStore,
} from './compensation-store.js';
export type { PlanRecord, StepMetadata, StepResultRecord, PlanStore } from './plan-store.js';
export type { EventQuery, EventStore } from './event-store.js';
export type { ConsumerPosition, ConsumerStore } from './consumer-store.js';
export {
  deliveryStatuses,
  interruptedNoticeIndex,
  type DeliveryStatus,
  type DeliveryKey,
  type DeliveryRecord,
  type DeliveryIntent,
  type DeliveredBlock,
  type DeliveryStore,
} from './delivery-store.js';
export type { ProfileStore } from './profile-store.js';
export {
  recentLimit,
  type SessionState,
  type SessionState as LedgerSessionState,
  type RecoveryStore,
} from './recovery-store.js';
export { createMemoryLedger } from './memory-ledger.js';
export { createSqliteLedger, type SqliteLedgerOptions } from './sqlite-ledger.js';
export { createPostgresLedger, type PostgresLedger, type PostgresLedgerOptions } from './postgres-ledger.js';
export type { SessionFence } from './postgres-fence.js';
