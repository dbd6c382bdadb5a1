/** Our model request as the AI SDK's call options (the prompt, the tools, thinking): one shape for spec v2 and v3. */
import type { LanguageModelV3CallOptions, LanguageModelV3Message } from '@ai-sdk/provider';
import type { ModelMessage, ModelRequest, ThinkingLevel } from '../model-provider.js';
import { inlineDataOf } from '../inline-data.js';

/** Provider options per AI SDK provider name (`{ openai: { … }, anthropic: { … } }`), passed to every call. */
export type AiSdkProviderOptions = NonNullable<LanguageModelV3CallOptions['providerOptions']>;

/** The `budgetTokens` each thinking level asks Anthropic models for (the AI SDK adds it to the output limit). */
const anthropicBudgets: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 4096,
  high: 8192,
};

/** What the caller configured for every call, beside the request itself. */
export interface CallSettings {
  readonly maxOutputTokens: number | undefined;
  readonly providerOptions: AiSdkProviderOptions | undefined;
}

/** The call options of one request; `signal` is the run's abort signal, handed to the model's fetch. */
export function toCallOptions(
  request: ModelRequest,
  settings: CallSettings,
  signal: AbortSignal,
): LanguageModelV3CallOptions {
  const system: LanguageModelV3Message[] =
    request.system === undefined || request.system.length === 0
      ? []
      : [{ role: 'system', content: request.system }];
  const tools = request.tools.map((tool) => ({
    type: 'function' as const,
    name: tool.name,
    description: tool.description,
    inputSchema: { ...tool.inputSchema },
  }));
  const providerOptions = mergeProviderOptions(thinkingOptions(request.thinking), settings.providerOptions);
  return {
    prompt: [...system, ...request.messages.map(toPromptMessage)],
    abortSignal: signal,
    ...(tools.length === 0 ? {} : { tools, toolChoice: { type: 'auto' as const } }),
    ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
    ...(providerOptions === undefined ? {} : { providerOptions }),
  };
}

function toPromptMessage(message: ModelMessage): LanguageModelV3Message {
  switch (message.role) {
    case 'user': {
      const text = message.content.length > 0 ? [{ type: 'text' as const, text: message.content }] : [];
      const files = (message.attachments ?? []).map((attachment) => ({
        type: 'file' as const,
        data: inlineDataOf(attachment),
        mediaType: attachment.mediaType,
        filename: attachment.name,
      }));
      return { role: 'user', content: [...text, ...files] };
    }
    case 'assistant': {
      const text = message.content.length > 0 ? [{ type: 'text' as const, text: message.content }] : [];
      const calls = (message.toolCalls ?? []).map((call) => ({
        type: 'tool-call' as const,
        toolCallId: call.id,
        toolName: call.name,
        input: call.args ?? {},
      }));
      return { role: 'assistant', content: [...text, ...calls] };
    }
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: message.toolCallId,
            toolName: message.tool,
            output: { type: message.isError === true ? 'error-text' : 'text', value: message.content },
          },
        ],
      };
  }
}

/**
 * The thinking level in each vendor's provider options: OpenAI's `reasoningEffort`, Anthropic's thinking budget.
 * A provider reads only its own key, so both go to every call.
 */
function thinkingOptions(thinking: ThinkingLevel | undefined): AiSdkProviderOptions | undefined {
  if (thinking === undefined || thinking === 'off') return undefined;
  return {
    openai: { reasoningEffort: thinking },
    anthropic: { thinking: { type: 'enabled', budgetTokens: anthropicBudgets[thinking] } },
  };
}

/** The caller's options over the thinking ones, merged per provider name. */
function mergeProviderOptions(
  base: AiSdkProviderOptions | undefined,
  override: AiSdkProviderOptions | undefined,
): AiSdkProviderOptions | undefined {
  if (base === undefined) return override;
  if (override === undefined) return base;
  const merged: AiSdkProviderOptions = { ...base };
  for (const [name, options] of Object.entries(override)) merged[name] = { ...merged[name], ...options };
  return merged;
}
