export {
  createRuntime,
  runtimeOptionsSchema,
  type Runtime,
  type RuntimeOptions,
  type RuntimeConfig,
  type Session,
  type SessionStatus,
  type SessionState,
  type SessionQueue,
  type QueueItem,
  type SendResult,
  type WaitResult,
  type EventStreamOptions,
  type InboundMessageInput,
} from './runtime/index.js';
export type { RunSummary } from './actors/run-summary.js';
export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolRisk,
} from './tools/index.js';
export { RuntimeError, isRuntimeError, errorCodes, type ErrorCode, type ErrorInfo } from './core/errors.js';
export {
  runtimeEventSchema,
  parseRuntimeEvent,
  eventTypes,
  runStatuses,
  type RuntimeEvent,
  type EventOf,
  type EventInput,
  type EventType,
  type RunStatus,
} from './core/events.js';
export { systemClock, type Clock, type TimerHandle } from './core/clock.js';
export { sequentialIds, seededRandom, randomIds, type IdGenerator, type Random } from './core/ids.js';
export {
  openaiProvider,
  anthropicProvider,
  type OpenAIProviderOptions,
  type AnthropicProviderOptions,
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
  type InboxUpdate,
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
export type { AuthProfileConfig, SecretSource } from './runtime/auth-profiles.js';
