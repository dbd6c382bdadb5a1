/** `agentlanes/anthropic`: the Anthropic Messages adapter, on `@anthropic-ai/sdk` (an optional peer dependency). */
export { anthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
