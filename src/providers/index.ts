export {
  thinkingLevels,
  ProviderError,
  type ThinkingLevel,
  type ToolCall,
  type ModelMessage,
  type ToolSpec,
  type ModelRequest,
  type ProviderCredential,
  type ModelCallOptions,
  type Usage,
  type FinishReason,
  type ModelPart,
  type ModelProvider,
} from './model-provider.js';
export { openaiProvider, type OpenAIProviderOptions } from './openai-provider.js';
export { anthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
