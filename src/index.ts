/**
 * `agentlanes`: the contract a bot developer writes against. Create a runtime, talk to its sessions, define tools,
 * handle errors, read events, pick a ledger. Everything else has a subpath of its own (docs/architecture.md, "The
 * public API"): `agentlanes/ledger`, `agentlanes/providers`, `agentlanes/plans`, `agentlanes/attachments`,
 * `agentlanes/authority`, `agentlanes/events`, `agentlanes/queue`, `agentlanes/clock`. test/exports.test.ts holds
 * the root to 50 names at most.
 */
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
  type InboundMessageInput,
  type SendResult,
  type WaitResult,
  type PausedRunInfo,
  type ApprovalInput,
  type SupplyInput,
  type PendingCall,
  type UndoResult,
  type UndoStep,
  type EventStreamOptions,
  type ForkOptions,
  type SessionSummary,
  type SessionPage,
  type SessionPageOptions,
} from './runtime/index.js';
export type { RunSummary } from './runner/index.js';
export type { QueueMode, QueueSettingsInput } from './policies/index.js';
export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolRisk,
  type ToolEntry,
  type ToolSource,
} from './tools/index.js';
export {
  RuntimeError,
  isRuntimeError,
  errorCodes,
  type ErrorCode,
  type ErrorInfo,
  parseRuntimeEvent,
  type RuntimeEvent,
  type EventOf,
  type EventType,
} from './core/index.js';
export { createMemoryLedger, createSqliteLedger, createPostgresLedger, type Ledger } from './ledger/index.js';
export type { ModelProvider } from './providers/index.js';
