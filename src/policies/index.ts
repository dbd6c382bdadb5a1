export { backoffDelay, retryAfterDelay } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export { maxAttempts, maxAttemptsCap, minAttempts } from './attempt-budget.js';
export { createBlockChunker } from './block-chunker.js';
export type { BlockChunker, BlockChunkerOptions } from './block-chunker.js';
export {
  buildCollectPrompt,
  buildDroppedNotice,
  canMerge,
  collectHeader,
  summarizeMessage,
  takeCollectBatch,
} from './collect-prompt.js';
export type { CollectPromptOptions, MessageOrigin } from './collect-prompt.js';
export {
  classifyFailure,
  coolsProfile,
  disablesProfile,
  errorCodeFor,
  failureReasons,
  rotatesProfile,
} from './classify-failure.js';
export type { FailureReason, ProviderFailure } from './classify-failure.js';
export { dedupeWindowMs, isDuplicate, rememberMessage } from './queue-admission.js';
export { composeMessageText, describeAttachment, inlineAttachmentsOf } from './attachment-prompt.js';
export {
  anthropicInlineCapabilities,
  bareMediaType,
  inlineKindOf,
  inlineKindsFor,
  modelMatches,
  openaiInlineCapabilities,
  refuseInline,
} from './inline-capabilities.js';
export type { InlineCandidate, InlineCapability, InlineRefusal } from './inline-capabilities.js';
export {
  defaultSubagentDeny,
  spawnSubagentTool,
  subagentDepth,
  subagentKey,
  subagentLayers,
  subagentParent,
} from './subagent-policy.js';
export type { SeenMessage } from './queue-admission.js';
export { drainDueAt } from './drain-timing.js';
export type { DrainTimingInput } from './drain-timing.js';
export { decideCap } from './queue-cap.js';
export type { CapDecision } from './queue-cap.js';
export { orderProfiles, profileKinds } from './order-profiles.js';
export type { OrderableProfile, OrderProfilesInput, ProfileKind } from './order-profiles.js';
export {
  availableAt,
  failureResetMs,
  freshProfileState,
  isAvailable,
  nextCooldownMs,
  nextDisableMs,
  recordFailure,
  recordSuccess,
  recordUse,
} from './profile-cooldown.js';
export type { ProfileFailure, ProfileState } from './profile-cooldown.js';
export {
  channelOf,
  defaultQueueSettings,
  dropPolicies,
  normalizeQueueMode,
  queueModes,
  queueSettingsSchema,
  resolveQueueSettings,
} from './queue-settings.js';
export type {
  DropPolicy,
  QueueMode,
  QueueSettings,
  QueueSettingsInput,
  QueueSettingsLayers,
} from './queue-settings.js';
export { compileToolGlob, compileToolPatterns } from './tool-pattern.js';
export type { ToolGroups, ToolMatcher } from './tool-pattern.js';
export { isToolAllowed, resolveToolPolicy } from './tool-policy.js';
export type { ResolvedToolPolicy, ToolPolicyLayer } from './tool-policy.js';
export { approvalMemories, needsApproval } from './approval-rules.js';
export type { ApprovalInput, ApprovalMemory } from './approval-rules.js';
export { failureClassOf, failurePrecedence, runFailureCode } from './error-ladder.js';
export type { FailureClass } from './error-ladder.js';
export {
  isTransientToolFailure,
  nextToolRetryDelay,
  noToolRetry,
  toolFailureKinds,
  toolRetryFor,
} from './tool-retry.js';
export type { ToolFailureKind, ToolRetrySettings } from './tool-retry.js';
export { admittedMessageIds, stillToRun } from './still-to-run.js';
export type { AdmittingTurn, RecoverableMessage } from './still-to-run.js';
export {
  addressAllowed,
  addressKindAllowed,
  addressKinds,
  classifyAddress,
  hostAllowed,
  normalizeHost,
  parseIpv4,
  parseIpv6,
  privateNetworkKinds,
  publicOnlyPolicy,
} from './network-address.js';
export type { AddressKind, FetchPolicy } from './network-address.js';
export {
  defaultControlRules,
  hasAuthority,
  leastAuthority,
  mayControl,
  rankOf,
  roleToolLayers,
} from './authority.js';
export type { Authority, ControlRule, RunAuthority } from './authority.js';
export {
  attributeMessage,
  escapeSenderText,
  senderLinesNotice,
  senderPrefix,
  systemWithSenderLines,
} from './sender-prompt.js';
export type { SenderAttribution } from './sender-prompt.js';
export { countBlocks } from './block-chunker.js';
export { dedupeMaxIds } from './queue-admission.js';
export { decideAdmission, isRunActive, type Admission, type SessionActivity } from './queue-admission.js';
export { dropSummaryLimit, keepDropSummary } from './queue-cap.js';
