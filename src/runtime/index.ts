export { createRuntime, type Runtime } from './create-runtime.js';
export type { Session, SessionStatus, PlanInput } from './session-handle.js';
export type { WaitResult, PausedRunInfo } from '../actors/wait-for-run.js';
export type { PlanRunResult } from '../runner/plan-run.js';
export type { ApprovePlanInput } from '../actors/plan-api.js';
export type { ApprovalInput, SupplyInput } from '../actors/tool-decisions.js';
export type { UndoResult, UndoStep } from '../runner/undo-run.js';
export type { SessionQueue, QueueItem } from '../actors/session-queue-handle.js';
export type { SendResult } from '../actors/admit-message.js';
export type { SessionState } from '../actors/session-activity.js';
export type { EventStreamOptions } from '../events/event-stream.js';
export type { ForkOptions } from '../actors/fork-session.js';
export type { InboundMessageInput } from '../actors/inbound-message.js';
export type { AuthorityOptions } from '../actors/authority-options.js';
export type { Controller } from '../actors/control-check.js';
export type {
  SessionSummary,
  SessionPage,
  SessionPageOptions,
  PendingCall,
} from '../actors/runtime-queries.js';
export { runtimeOptionsSchema, type RuntimeOptions } from './runtime-options.js';
