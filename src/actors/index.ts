export { sendMessage, type SendResult } from './admit-message.js';
export {
  attachmentsOptionsSchema,
  workspaceOptionsSchema,
  type AttachmentsOptions,
  type WorkspaceOptions,
} from './attachment-options.js';
export { authorityOptionsSchema, resolveAuthority, type AuthorityOptions } from './authority.js';
export { assertMayControl, type Controller } from './authority.js';
export { forkSession, type ForkOptions } from './runtime-sessions.js';
export {
  inboundMessageSchema,
  messagePartSchema,
  parseInboundMessage,
  parseQueueSettings,
  parseSessionKey,
  type InboundMessageInput,
  type MessagePartInput,
} from './inbound-message.js';
export { watchRuntimeLedger } from './ledger-health.js';
export { sessionScopeOf } from './runtime-internals.js';
export { createMessageAttachments } from './inbound-message.js';
export { openSessions } from './runtime-internals.js';
export { approvePlan, executePlan, type ApprovePlanInput } from './session-runs.js';
export { recoverAtStart } from './runtime-sessions.js';
export { runRoleLayers, type RuntimeAuthority } from './authority.js';
export { assertOpen, type RuntimeInternals } from './runtime-internals.js';
export {
  listPendingCalls,
  listSessionPage,
  sessionPageLimit,
  type PendingCall,
  type SessionPage,
  type SessionPageOptions,
  type SessionSummary,
} from './runtime-sessions.js';
export { abortSession, sessionStatus, type SessionStatus } from './session-runs.js';
export { activityOf, type SessionState } from './session-machine.js';
export type { DeliveryInDoubt, PlanInput, Session } from './session-api.js';
export { createSessionQueue, type QueueItem, type SessionQueue } from './session-api.js';
export type { LiveSession } from './session-registry.js';
export { createSessionTools, type SessionTools } from './session-api.js';
export { createSubagentSpawner } from './subagent-spawner.js';
export { approveCall, supplyResult, type ApprovalInput, type SupplyInput } from './operator-answers.js';
export { assertUndoable, parseUndoOptions } from './session-api.js';
export { parseTimeout, waitForRun, type PausedRunInfo, type WaitResult } from './session-runs.js';
