/** `agentlanes/openai`: the OpenAI chat completions adapter, on the `openai` SDK (an optional peer dependency). */
export { openaiProvider, type OpenAIProviderOptions } from './openai-provider.js';
