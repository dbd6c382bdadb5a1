export {
  approvalDecisions,
  approvalMemories,
  approvalIdOf,
  type ApprovalChoice,
  type ApprovalMemory,
} from './approvals.js';
export {
  inlineKinds,
  partModes,
  partSources,
  type AttachmentRef,
  type InlineAttachment,
  type InlineKind,
  type PartMode,
  type PartSource,
  type StoredPart,
} from './attachments.js';
export {
  builtInRoles,
  controlActions,
  roleNamePattern,
  type BuiltInRole,
  type ControlAction,
  type SenderAuthority,
} from './authority.js';
export {
  abortReason,
  maxDurationMs,
  maxHostTimerMs,
  sleepOn,
  systemClock,
  type Clock,
  type TimerHandle,
} from './clock.js';
export { createDeferred, type Deferred } from './deferred.js';
export { dispositions, type Disposition } from './dispositions.js';
export { dropReasons, type DropReason } from './drop-reasons.js';
export {
  RuntimeError,
  assertNever,
  errorCodes,
  isRuntimeError,
  toErrorInfo,
  type ErrorCode,
  type ErrorInfo,
} from './errors.js';
export { eventGuard } from './event-guard.js';
export {
  eventTypes,
  parseRuntimeEvent,
  runtimeEventSchema,
  type EventInput,
  type EventOf,
  type EventType,
  type PauseState,
  type RunStatus,
  type RuntimeEvent,
} from './events.js';
export { failureReasons, type FailureReason } from './failure-reasons.js';
export { pieceCodec, type PieceCodec } from './piece-codec.js';
export { randomIds, seededRandom, sequentialIds, type IdGenerator, type Random } from './ids.js';
export { inboxStatuses, type InboxStatus } from './inbox-statuses.js';
export { assertInputBounds, storableString, storableText, storableTextProblem } from './input-bounds.js';
export { lateBound, type LateBound } from './late-bound.js';
export type { ToolCall, ToolSpec, Usage } from './model-types.js';
export { pauseStates } from './pause-states.js';
export { queueModes, type QueueMode } from './queue-modes.js';
export {
  openRunStatuses,
  recordedRunStatuses,
  runStatuses,
  type OpenRunStatus,
  type RecordedRunStatus,
} from './run-statuses.js';
export { scrubSecrets } from './scrub-secrets.js';
export { isSettledWrite, settledWrite } from './settled-write.js';
export { thinkingLevels, type ThinkingLevel } from './thinking-levels.js';
