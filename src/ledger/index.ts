export type { Ledger } from './contract/ledger.js';
export type { SessionRecord, SessionStore } from './contract/session-store.js';
export {
  inboxStatuses,
  type InboxStatus,
  type InboxRecord,
  type InboxUpdate,
  type InboxStore,
} from './contract/inbox-store.js';
export {
  pausedRunStatuses,
  type PausedRunStatus,
  type OpenRunStatus,
  type RunRecord,
  type RunClose,
  type RunCloseOptions,
  type RunProgress,
  type RunStore,
} from './contract/run-store.js';
export type { TurnRecord, TranscriptFork, TranscriptStore } from './contract/transcript-store.js';
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
} from './contract/tool-call-store.js';
export {
  compensationStatuses,
  type CompensationStatus,
  type CompensationRecord,
  type CompensationUpdate,
  type CompensationStore,
} from './contract/compensation-store.js';
export type { PlanRecord, StepMetadata, StepResultRecord, PlanStore } from './contract/plan-store.js';
export type { EventQuery, EventStore } from './contract/event-store.js';
export type { ConsumerPosition, ConsumerStore } from './contract/consumer-store.js';
export {
  deliveryStatuses,
  interruptedNoticeIndex,
  type DeliveryStatus,
  type DeliveryKey,
  type DeliveryRecord,
  type DeliveryIntent,
  type DeliveredBlock,
  type DeliveryStore,
} from './contract/delivery-store.js';
export type { ProfileStore } from './contract/profile-store.js';
export {
  recentLimit,
  type SessionState,
  type SessionState as LedgerSessionState,
  type SessionLoad,
  type RecoveryStore,
} from './contract/recovery-store.js';
export { createMemoryLedger } from './memory/ledger.js';
export { createSqliteLedger, type SqliteLedgerOptions } from './sqlite/ledger.js';
export { createPostgresLedger, type PostgresLedger, type PostgresLedgerOptions } from './postgres/ledger.js';
export type { SessionFence } from './postgres/fence.js';
export { translatePostgresError } from './postgres/errors.js';
export { numericInt8Types, postgresSchemaPattern } from './postgres/connection.js';
export { isFileFailure } from './sqlite/file.js';
export type { FenceLease } from './postgres/fence.js';
export { applyMigrations } from './postgres/schema.js';
export { writerLockPath } from './sqlite/lock.js';
