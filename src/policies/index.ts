export { backoffDelay, retryAfterDelay } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
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
export { dedupeWindowMs, isDuplicate, rememberMessage } from './dedupe.js';
export type { SeenMessage } from './dedupe.js';
export { drainDueAt } from './drain-timing.js';
export type { DrainTimingInput } from './drain-timing.js';
export { decideCap } from './queue-cap.js';
export type { CapDecision } from './queue-cap.js';
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
