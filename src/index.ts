export {
  createRuntime,
  runtimeOptionsSchema,
  type Runtime,
  type RuntimeOptions,
  type Session,
  type SessionStatus,
  type SessionState,
  type SessionQueue,
  type QueueItem,
  type SendResult,
  type WaitResult,
  type PausedRunInfo,
  type ApprovalInput,
  type SupplyInput,
  type UndoResult,
  type UndoStep,
  type PlanInput,
  type PlanRunResult,
  type ApprovePlanInput,
  type EventStreamOptions,
  type InboundMessageInput,
  type AuthorityOptions,
  type Controller,
  type SessionSummary,
  type SessionPage,
  type SessionPageOptions,
  type PendingCall,
  type ForkOptions,
} from './runtime/index.js';
export type { RunSummary } from './runner/run-summary.js';
export {
  planSchema,
  planOptionsSchema,
  planModes,
  type Plan,
  type PlanStep,
  type PlanMode,
  type PlanOptions,
  type PlanOptionsInput,
  type StepResult,
  type StepPreview,
} from './plans/index.js';
export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolRisk,
  type ToolEntry,
  type ToolSource,
} from './tools/index.js';
export { RuntimeError, isRuntimeError, errorCodes, type ErrorCode, type ErrorInfo } from './core/errors.js';
export { builtInRoles, controlActions, type BuiltInRole, type ControlAction } from './core/authority.js';
export {
  runtimeEventSchema,
  parseRuntimeEvent,
  eventTypes,
  runStatuses,
  pauseStates,
  type PauseState,
  type RuntimeEvent,
  type EventOf,
  type EventInput,
  type EventType,
  type RunStatus,
} from './core/events.js';
export { systemClock, type Clock, type TimerHandle } from './core/clock.js';
export { sequentialIds, seededRandom, randomIds, type IdGenerator, type Random } from './core/ids.js';
export {
  ProviderError,
  thinkingLevels,
  type ModelProvider,
  type ModelRequest,
  type ModelMessage,
  type ModelPart,
  type ModelCallOptions,
  type ProviderCredential,
  type ThinkingLevel,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from './providers/index.js';
export {
  createSqliteLedger,
  type SqliteLedgerOptions,
  createPostgresLedger,
  type PostgresLedger,
  type PostgresLedgerOptions,
  type SessionFence,
  createMemoryLedger,
  inboxStatuses,
  type Ledger,
  type InboxRecord,
  type InboxStatus,
  type RunRecord,
  type TurnRecord,
  type SessionRecord,
  type LedgerSessionState,
  type EventQuery,
  type RunClose,
  type RunProgress,
  type InboxUpdate,
  pausedRunStatuses,
  type PausedRunStatus,
  type OpenRunStatus,
  type ToolCallRecord,
  type ToolCallKind,
  type ToolCallStatus,
  type ApprovalDecision,
  type CompensationRecord,
  type CompensationStatus,
  type SessionStore,
  type InboxStore,
  type RunStore,
  type TranscriptStore,
  type TranscriptFork,
  type ToolCallStore,
  type CompensationStore,
  type PlanStore,
  type EventStore,
  type ConsumerStore,
  type ProfileStore,
  type RecoveryStore,
} from './ledger/index.js';
export {
  queueModes,
  dropPolicies,
  defaultQueueSettings,
  type QueueMode,
  type DropPolicy,
  type QueueSettings,
  type QueueSettingsInput,
} from './policies/queue-settings.js';
export { summarizeOlderTurns, type Compactor, type CompactionInput } from './runner/compaction.js';
export { classifyFailure, failureReasons, type FailureReason } from './policies/classify-failure.js';
export type { AuthProfileConfig, SecretSource } from './runner/auth-profiles.js';
export type { ProfileStats } from './runner/auth-profile-stats.js';
export { dispositions, type Disposition } from './core/dispositions.js';
export {
  partModes,
  partSources,
  inlineKinds,
  type PartMode,
  type PartSource,
  type InlineKind,
  type AttachmentRef,
  type StoredPart,
  type InlineAttachment,
} from './core/attachments.js';
export {
  openaiInlineCapabilities,
  anthropicInlineCapabilities,
  inlineKindOf,
  type InlineCapability,
} from './policies/inline-capabilities.js';
export { messagePartSchema, type MessagePartInput } from './actors/message-parts.js';
export type { AttachmentsOptions, WorkspaceOptions } from './actors/attachment-options.js';
export { dropReasons, type DropReason } from './core/drop-reasons.js';
