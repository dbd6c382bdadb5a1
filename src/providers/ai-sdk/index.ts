/** `agentlanes/ai-sdk`: any AI SDK language model (spec v2 or v3, `@ai-sdk/provider`) as a model provider. */
export {
  aiSdkProvider,
  type AiSdkProviderConfig,
  type AiSdkLanguageModel,
  type AiSdkModelFactory,
} from './ai-sdk-provider.js';
export type { AiSdkProviderOptions } from './ai-sdk-prompt.js';
