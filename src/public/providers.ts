/**
 * `agentlanes/providers`: the model side of a runtime, for provider authors and for tuning failover. The
 * `ModelProvider` seam and what crosses it (requests, messages, parts, tool calls, usage, `ProviderError`), how a
 * failure is classified for failover (docs/failover.md), auth profiles and their stats, and transcript compaction.
 * `ModelProvider` is also on the root entry; the providers themselves are `agentlanes/openai`,
 * `agentlanes/anthropic` and `agentlanes/ai-sdk`.
 */
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
} from '../providers/index.js';
export { classifyFailure, failureReasons, type FailureReason } from '../policies/index.js';
export {
  summarizeOlderTurns,
  type Compactor,
  type CompactionInput,
  type AuthProfileConfig,
  type SecretSource,
  type ProfileStats,
} from '../runner/index.js';
