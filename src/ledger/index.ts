export {
  pausedRunStatuses,
  type PausedRunStatus,
  type OpenRunStatus,
  inboxStatuses,
  type InboxStatus,
  type InboxRecord,
  type InboxUpdate,
  type RunRecord,
  type RunClose,
  type RunProgress,
  type TurnRecord,
  type SessionRecord,
  type EventQuery,
  type ConsumerPosition,
  type Ledger,
  type SessionState as LedgerSessionState,
} from './ledger.js';
export { createMemoryLedger } from './memory-ledger.js';
export { createSqliteLedger, type SqliteLedgerOptions } from './sqlite-ledger.js';
export {
  toolCallKinds,
  toolCallStatuses,
  compensationStatuses,
  type ToolCallKind,
  type ToolCallStatus,
  type ApprovalDecision,
  type ToolCallResult,
  type ToolCallRecord,
  type ToolCallUpdate,
  type ToolCallKey,
  type RememberedTools,
  type CompensationStatus,
  type CompensationRecord,
  type CompensationUpdate,
} from './tool-call-records.js';
export type { PlanRecord, StepMetadata, StepResultRecord } from './plan-records.js';
